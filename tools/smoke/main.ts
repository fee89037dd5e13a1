import { randomBytes } from 'node:crypto';
import { generateKey } from '../../shared/keys/key-material';
import { errorLine, EXIT_CODES, exitCodeOf, UsageError } from '../common/exit';
import type { Env, ToolIo } from '../common/tool-io';
import { parseSmokeInvocation, USAGE, type SmokeInvocation } from './args';
import type { SmokeAwsClients } from './aws-clients';
import { buildChecks } from './checks';
import { evaluateChecks } from './evaluate';
import { REQUEST_TIMEOUT_MS, sendRequest, type SendOptions } from './http-client';
import { formatJson, formatTable, reportPassed, type SmokeReport } from './report';
import { runChecks, type ChecksRun, type RunOptions } from './runner';
import { createSecretMask, type SecretMask } from './secret-mask';
import { SmokeError } from './smoke-error';

export interface SmokeIo extends ToolIo {
  /** Test seams; the defaults are the real thing. */
  readonly createAwsClients?: (env: Env) => SmokeAwsClients;
  readonly sendOptions?: SendOptions;
  readonly run?: RunOptions;
}

const KNOWN_FAILURES = [UsageError, SmokeError];

/** An App-id of the allowed form that no secret holds. */
function unknownAppId(): string {
  return `smoke-test-unknown-${randomBytes(6).toString('hex')}`;
}

interface Target {
  readonly url: URL;
  readonly appKey: string;
  readonly stack?: string;
  /** The stack's key prefix; with --url unknown, so the default prefix's. */
  readonly keyPrefix?: string;
}

async function resolveTarget(
  invocation: Extract<SmokeInvocation, { kind: 'run' }>,
  io: SmokeIo,
): Promise<Target> {
  const { target, appId } = invocation;
  if (target.kind === 'url') return { url: target.url, appKey: target.appKey };
  // Only a run against a stack loads the SDK: a run against a URL starts without it.
  const [{ createSmokeAwsClients }, { readStackTarget }] = await Promise.all([
    import('./aws-clients'),
    import('./stack-target'),
  ]);
  const clients = io.createAwsClients?.(io.env) ?? createSmokeAwsClients(io.env, io.awsCallBounds);
  try {
    const { url, appKey, keyPrefix } = await readStackTarget(target.stackName, appId, clients);
    return { url, appKey, stack: target.stackName, ...(keyPrefix === undefined ? {} : { keyPrefix }) };
  } finally {
    clients.secretsManager.destroy();
    clients.cloudFormation.destroy();
  }
}

/** The line on standard error when the run's time limit cut it short, or undefined. */
function timeLimitLine(run: ChecksRun): string | undefined {
  if (run.stop?.kind !== 'time-limit') return undefined;
  const notSent = [...run.outcomes.values()].filter((outcome) => outcome.kind === 'not-run').length;
  return (
    `error: the run's time limit of ${run.stop.timeLimitMs / 1000} s passed; ` +
    `${notSent} of ${run.outcomes.size} requests were not sent (the report says which)\n`
  );
}

async function smoke(
  invocation: Extract<SmokeInvocation, { kind: 'run' }>,
  io: SmokeIo,
  secrets: string[],
): Promise<number> {
  const target = await resolveTarget(invocation, io);
  secrets.push(target.appKey);
  // Well formed, with the stack's prefix when known: it is looked up and refused as a wrong key, not as malformed.
  const wrongKey = generateKey(target.keyPrefix);
  secrets.push(wrongKey);
  const mask: SecretMask = createSecretMask(secrets);
  const checks = buildChecks({
    url: target.url,
    appId: invocation.appId,
    appKey: target.appKey,
    wrongKey,
    unknownAppId: unknownAppId(),
  });
  const requestTimeoutMs = io.sendOptions?.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const run = await runChecks(
    checks,
    (request, remainingMs) =>
      sendRequest(request, { ...io.sendOptions, timeoutMs: Math.min(requestTimeoutMs, remainingMs) }),
    io.run,
  );
  if (run.stop?.kind === 'unreachable' && run.answered === 0) {
    // Nothing answered: a table of rows that all say so would bury the one fact that matters.
    throw new SmokeError(`cannot reach ${target.url.href}: ${run.stop.reason}`);
  }
  const stop = timeLimitLine(run);
  const report: SmokeReport = {
    url: target.url.href,
    appId: invocation.appId,
    ...(target.stack === undefined ? {} : { stack: target.stack }),
    requestsSent: run.requestsSent,
    results: evaluateChecks(checks, run.outcomes, mask, run.retries),
  };
  io.stdout.write(mask(invocation.json ? formatJson(report) : formatTable(report)));
  if (stop !== undefined) io.stderr.write(mask(stop));
  return reportPassed(report) && stop === undefined ? EXIT_CODES.ok : EXIT_CODES.failed;
}

/**
 * The smoke test, callable in-process: parses argv, finds the API and the key, sends the checks' requests,
 * writes the report to io.stdout and returns the exit code (0 every check passed, 1 a check failed, the API could
 * not be reached or the run's time limit passed, or the target could not be read, 2 bad usage). Never throws,
 * never prints a key or a stack trace.
 */
export async function runSmoke(argv: readonly string[], io: SmokeIo): Promise<number> {
  const secrets: string[] = [];
  try {
    const invocation = parseSmokeInvocation(argv, io.env);
    if (invocation.kind === 'help') {
      io.stdout.write(USAGE);
      return EXIT_CODES.ok;
    }
    if (invocation.target.kind === 'url') secrets.push(invocation.target.appKey);
    return await smoke(invocation, io, secrets);
  } catch (error) {
    io.stderr.write(createSecretMask(secrets)(errorLine(error, KNOWN_FAILURES)));
    return exitCodeOf(error);
  }
}
