import { randomBytes } from 'node:crypto';
import { KeyStoreError } from '../keys/key-store';
import { generateKey } from '../../shared/keys/key-material';
import { errorMessage, errorName } from '../../shared/errors';
import { parseSmokeInvocation, SmokeUsageError, USAGE, type SmokeInvocation } from './args';
import { buildChecks } from './checks';
import { evaluateChecks } from './evaluate';
import { sendRequest, type SendOptions } from './http-client';
import { formatJson, formatTable, redact, reportPassed, type SmokeReport } from './report';
import { runChecks } from './runner';
import { SmokeError } from './smoke-error';
import { createSmokeAwsClients, readStackTarget, type SmokeAwsClients } from './stack-target';

export type Env = Readonly<Record<string, string | undefined>>;

export interface SmokeIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
  readonly env: Env;
  /** Test seams; the defaults are the real thing. */
  readonly createAwsClients?: (env: Env) => SmokeAwsClients;
  readonly sendOptions?: SendOptions;
}

export const EXIT_CODES = { passed: 0, failed: 1, usage: 2 } as const;

const KNOWN_FAILURES = [SmokeUsageError, SmokeError, KeyStoreError];

/** One line, whatever went wrong; anything unexpected is cut to its first line. */
function errorLine(error: unknown): string {
  const text = errorMessage(error) ?? 'unexpected failure';
  const known = KNOWN_FAILURES.some((type) => error instanceof type);
  const message = known ? text : `unexpected ${errorName(error) ?? 'Error'}: ${text.split('\n', 1)[0] ?? ''}`;
  return `error: ${message.replace(/\s+/g, ' ').trim()}\n`;
}

/** An App-id of the allowed form that no secret holds. */
function unknownAppId(): string {
  return `smoke-test-unknown-${randomBytes(6).toString('hex')}`;
}

interface Target {
  readonly url: URL;
  readonly appKey: string;
  readonly stack?: string;
}

async function resolveTarget(
  invocation: Extract<SmokeInvocation, { kind: 'run' }>,
  io: SmokeIo,
): Promise<Target> {
  const { target, appId } = invocation;
  if (target.kind === 'url') return { url: target.url, appKey: target.appKey };
  const clients = (io.createAwsClients ?? createSmokeAwsClients)(io.env);
  try {
    const { url, appKey } = await readStackTarget(target.stackName, appId, clients);
    return { url, appKey, stack: target.stackName };
  } finally {
    clients.secretsManager.destroy();
    clients.cloudFormation.destroy();
  }
}

/**
 * The smoke test, callable in-process: parses argv, finds the API and the key, sends the checks' requests,
 * writes the report to io.stdout and returns the exit code (0 every check passed, 1 a check failed or the target
 * could not be read, 2 bad usage). Never throws, never prints a key or a stack trace.
 */
export async function runSmoke(argv: readonly string[], io: SmokeIo): Promise<number> {
  const secrets: string[] = [];
  try {
    const invocation = parseSmokeInvocation(argv, io.env);
    if (invocation.kind === 'help') {
      io.stdout.write(USAGE);
      return EXIT_CODES.passed;
    }
    if (invocation.target.kind === 'url') secrets.push(invocation.target.appKey);

    const target = await resolveTarget(invocation, io);
    secrets.push(target.appKey);
    const wrongKey = generateKey();
    const checks = buildChecks({
      url: target.url,
      appId: invocation.appId,
      appKey: target.appKey,
      wrongKey,
      unknownAppId: unknownAppId(),
    });
    const { outcomes, requestsSent } = await runChecks(checks, (request) =>
      sendRequest(request, io.sendOptions),
    );
    const report: SmokeReport = {
      url: target.url.href,
      appId: invocation.appId,
      ...(target.stack === undefined ? {} : { stack: target.stack }),
      requestsSent,
      results: evaluateChecks(checks, outcomes),
    };
    const text = invocation.json ? formatJson(report) : formatTable(report);
    io.stdout.write(redact(text, [...secrets, wrongKey]));
    return reportPassed(report) ? EXIT_CODES.passed : EXIT_CODES.failed;
  } catch (error) {
    io.stderr.write(redact(errorLine(error), secrets));
    return error instanceof SmokeUsageError ? EXIT_CODES.usage : EXIT_CODES.failed;
  }
}
