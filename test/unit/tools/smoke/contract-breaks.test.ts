/**
 * The smoke test against servers that keep the contract but for one rule each: it must fail, naming the rows of
 * that rule and no others. The servers are built from the project's real routing, handler and response
 * catalogue (support/contract-server.ts), so with no breakage they pass.
 */
import { generateKey } from '../../../../shared/keys/key-material';
import type { LocalHttpResponse } from '../../../../tools/local-server/proxy-event';
import { SUCCESS_BODY } from '../../../../shared/api/responses';
import {
  requestHeader,
  startContractServer,
  withBody,
  withHeader,
  withoutHeader,
  type Breakage,
  type ContractServer,
  type ReceivedRequest,
} from '../../../support/contract-server';
import { failedIds, parseReport, runSmokeInProcess } from '../../../support/run-smoke';

const APP_KEY = generateKey();
const KEYS = { demo: [APP_KEY] };

/** "A few dozen" at most: the smoke test is not a load test. */
const MAX_REQUESTS = 36;

async function smokeAgainst(breakage?: Breakage) {
  const server: ContractServer = await startContractServer(KEYS, breakage);
  try {
    const run = await runSmokeInProcess(['--url', server.paymentUrl, '--app-id', 'demo', '--json'], {
      APP_KEY,
    });
    return { run, report: parseReport(run.stdout), received: server.received };
  } finally {
    await server.close();
  }
}

const when =
  (
    applies: (request: ReceivedRequest, response: LocalHttpResponse) => boolean,
    change: (response: LocalHttpResponse) => LocalHttpResponse,
  ): Breakage =>
  (request, response) =>
    applies(request, response) ? change(response) : response;

const isUnknownApp = (request: ReceivedRequest): boolean => {
  const appId = requestHeader(request, 'App-id');
  return appId !== undefined && appId !== 'demo';
};

const status = (code: number) => (_request: ReceivedRequest, response: LocalHttpResponse) =>
  response.statusCode === code;

describe('the smoke test against a server that keeps the contract', () => {
  it('passes every check, sending eleven requests, and prints no key', async () => {
    const { run, report, received } = await smokeAgainst();

    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(report.passed).toBe(true);
    expect(failedIds(report)).toEqual([]);
    expect(report.checks).toHaveLength(12);
    expect(received).toHaveLength(report.requestsSent);
    expect(received.length).toBe(11);
    expect(received.length).toBeLessThanOrEqual(MAX_REQUESTS);
    expect(run.stdout).not.toContain(APP_KEY);
  });
});

describe('the smoke test against a server that breaks one rule', () => {
  it.each<[string, Breakage, string[]]>([
    [
      'a 401 code of its own for an unknown app',
      when(
        (request, response) => response.statusCode === 401 && isUnknownApp(request),
        (response) => withBody(response, 401, '{"code":"unknown_app","message":"Unknown App-id."}'),
      ),
      ['unknown-app', 'same-401'],
    ],
    [
      'a wrong key accepted',
      when(
        (request) =>
          requestHeader(request, 'App-key')?.startsWith('pay_') === true &&
          requestHeader(request, 'App-key') !== APP_KEY,
        (response) =>
          withBody(withoutHeader(response, 'WWW-Authenticate'), 200, JSON.stringify(SUCCESS_BODY)),
      ),
      ['wrong-key'],
    ],
    [
      'every 401 sent as text/html',
      when(status(401), (response) => withHeader(response, 'Content-Type', ['text/html'])),
      ['wrong-key', 'unknown-app', 'missing-app-key', 'missing-app-id', 'duplicate-app-key'],
    ],
  ])('%s: exit 1, failing exactly the rows of that rule', async (_label, breakage, failing) => {
    // Act
    const { run, report, received } = await smokeAgainst(breakage);

    // Assert
    expect(run.code).toBe(1);
    expect(failedIds(report)).toEqual(failing);
    for (const check of report.checks.filter((row) => !row.passed))
      expect(check.problems.length).toBeGreaterThan(0);
    expect(received.length).toBe(report.requestsSent);
    expect(received.length).toBeLessThanOrEqual(MAX_REQUESTS);
  });
});
