import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { APIGatewayProxyResult } from 'aws-lambda';

/**
 * Loads the bundled asset in a fresh Node process, as the Lambda runtime does (require index.js, call the
 * exported handler with the event and a Lambda context), invokes it once per event in order, and returns each
 * outcome and everything it logged. Only Node built-ins are available to the child: the asset must carry its own
 * dependencies.
 */
const DRIVER = `
const { readFileSync, writeFileSync } = require('node:fs');
const [assetFile, eventsFile, resultsFile] = process.argv.slice(1);
const events = JSON.parse(readFileSync(eventsFile, 'utf8'));
const functionName = process.env.AWS_LAMBDA_FUNCTION_NAME || 'payment-api-test';
const context = (index) => ({
  callbackWaitsForEmptyEventLoop: true,
  functionName,
  functionVersion: '$LATEST',
  invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:' + functionName,
  memoryLimitInMB: '256',
  awsRequestId: 'lambda-request-' + (index + 1),
  logGroupName: '/aws/lambda/' + functionName,
  logStreamName: '2026/11/22/[$LATEST]0123456789abcdef',
  getRemainingTimeInMillis: () => 10000,
  done: () => undefined,
  fail: () => undefined,
  succeed: () => undefined,
});
// The runtime's clock, moved on by advanceClock steps (Date.now is what the Lambdas read time by).
const realNow = Date.now;
let clockOffsetMs = 0;
Date.now = () => realNow() + clockOffsetMs;
const { handler } = require(assetFile);
(async () => {
  const outcomes = [];
  let invocation = 0;
  for (const event of events) {
    if (event && typeof event === 'object' && typeof event.__advanceClockMs === 'number') {
      clockOffsetMs += event.__advanceClockMs;
      continue;
    }
    const index = invocation++;
    try {
      outcomes.push({ ok: true, value: await handler(event, context(index)) });
    } catch (error) {
      outcomes.push({ ok: false, error: { name: error && error.name, message: error && error.message } });
    }
  }
  writeFileSync(resultsFile, JSON.stringify(outcomes));
})().catch((error) => { console.error('driver failed:', error && error.name); process.exit(1); });
`;

export type AssetOutcome =
  | { readonly ok: true; readonly value?: unknown }
  | { readonly ok: false; readonly error: { readonly name?: string; readonly message?: string } };

export interface AssetRun<T> {
  readonly results: T[];
  /** Everything the process printed: the Lambda's logs. */
  readonly output: string;
}

/**
 * A step of the driver that invokes nothing: the time between two invocations, on the runtime's clock (Date.now)
 * rather than waited for, so that no bound a test sets can be overrun by a slow machine.
 */
export function advanceClock(ms: number): { readonly __advanceClockMs: number } {
  return { __advanceClockMs: ms };
}

/** Each invocation's outcome: what the handler returned, or the error it threw. `advanceClock` steps give none. */
export async function invokeAssetOutcomes(
  assetDir: string,
  events: readonly unknown[],
  env: Readonly<Record<string, string>>,
): Promise<AssetRun<AssetOutcome>> {
  const work = mkdtempSync(join(tmpdir(), 'payment-asset-'));
  try {
    const eventsFile = join(work, 'events.json');
    const resultsFile = join(work, 'results.json');
    writeFileSync(eventsFile, JSON.stringify(events));
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ['-e', DRIVER, join(assetDir, 'index.js'), eventsFile, resultsFile],
      // A clean environment: nothing from this test process leaks into the "runtime".
      { env: { PATH: process.env.PATH ?? '', ...env }, cwd: work, maxBuffer: 16 * 1024 * 1024 },
    );
    return {
      results: JSON.parse(readFileSync(resultsFile, 'utf8')) as AssetOutcome[],
      output: stdout + stderr,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The payment Lambda's answers; any thrown error fails the call (the handler must always answer). */
export async function invokeAsset(
  assetDir: string,
  events: readonly unknown[],
  env: Readonly<Record<string, string>>,
): Promise<AssetRun<APIGatewayProxyResult>> {
  const { results, output } = await invokeAssetOutcomes(assetDir, events, env);
  return {
    results: results.map((outcome) => {
      if (!outcome.ok) {
        throw new Error(
          `the handler threw ${outcome.error.name ?? 'an error'}: ${outcome.error.message ?? ''}`,
        );
      }
      return outcome.value as APIGatewayProxyResult;
    }),
    output,
  };
}
