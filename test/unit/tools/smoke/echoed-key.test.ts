/**
 * A server that echoes the key it was sent, in every shape we could think of, into whatever the report quotes:
 * no part of the key may reach the table or the JSON report, in any case, not even what a cut would leave.
 */
import { generateKey } from '../../../../shared/keys/key-material';
import type { LocalHttpResponse } from '../../../../tools/local-server/proxy-event';
import {
  requestHeaders,
  startContractServer,
  withBody,
  withHeader,
  type ContractServer,
  type ReceivedRequest,
} from '../../../support/contract-server';
import { runSmokeInProcess } from '../../../support/run-smoke';

const APP_KEY = generateKey();

/** Ways to put `key` into the answer where the report quotes it; the server uses one per request, in turn. */
const ECHOES: readonly ((response: LocalHttpResponse, key: string) => LocalHttpResponse)[] = [
  // Across the 60 characters a quoted value is cut to: shortening first would leave part of the key standing.
  (response, key) => withHeader(response, 'Cache-Control', [`max-age=9, x="${'x'.repeat(12)}${key}"`]),
  (response, key) => withHeader(response, 'Content-Type', [`text/plain; key=${key.toUpperCase()}`]),
  (response, key) =>
    withBody(
      response,
      response.statusCode,
      JSON.stringify({ code: `${'c'.repeat(20)}${key.toLowerCase()}`, message: 'm' }),
    ),
  (response, key) =>
    withBody(response, response.statusCode, JSON.stringify({ code: key.slice(0, 24), message: 'm' })),
  (response, key) => withHeader(response, 'Cache-Control', [`${key}, ${key}`]),
  (response, key) =>
    withBody(response, response.statusCode, JSON.stringify({ code: `\u0000${key}\u001b[0m`, message: 'm' })),
  (response, key) => withHeader(response, 'Content-Type', [`application/${key.slice(5)}`]),
  (response, key) => withHeader(response, 'Allow', [`POST, ${key.slice(10, 40)}`]),
  (response, key) =>
    withBody(
      response,
      response.statusCode,
      JSON.stringify({ code: `${key.slice(0, 20)}-${key.slice(20)}`, message: 'm' }),
    ),
  (response, key) =>
    withHeader(response, 'Cache-Control', [`${key.slice(0, 24)}, no-store, ${key.slice(24)}`]),
  (response, key) =>
    withHeader(response, 'Content-Type', [`${'t'.repeat(45)}${key.slice(-30).toUpperCase()}`]),
];

function echoing(request: ReceivedRequest, response: LocalHttpResponse, index: number): LocalHttpResponse {
  const key = requestHeaders(request, 'App-key')[0];
  const echo = ECHOES[index % ECHOES.length];
  return key === undefined || echo === undefined ? response : echo(response, key);
}

/**
 * Shorter than the runs the mask looks for (16): every echo below holds 16 or more characters of the key, so
 * all of it is masked, and what a cut of a quoted value would have left of it shows up here.
 */
const LEAKED_RUN = 10;

/** Every run of LEAKED_RUN characters of `secret` found in `text`, case-insensitively. */
function runsOf(text: string, secret: string): string[] {
  const lower = text.toLowerCase();
  const runs: string[] = [];
  for (let start = 0; start + LEAKED_RUN <= secret.length; start++) {
    const run = secret.slice(start, start + LEAKED_RUN);
    if (lower.includes(run.toLowerCase())) runs.push(run);
  }
  return runs;
}

describe('the smoke test against a server that echoes the key', () => {
  let server: ContractServer;
  beforeEach(async () => {
    let answered = 0;
    server = await startContractServer({ demo: [APP_KEY] }, (request, response) =>
      echoing(request, response, answered++),
    );
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([
    ['the table', []],
    ['the JSON report', ['--json']],
  ])('prints no part of any key it sent in %s, and fails the rows that echoed', async (_label, options) => {
    // Act
    const run = await runSmokeInProcess(['--url', server.paymentUrl, '--app-id', 'demo', ...options], {
      APP_KEY,
    });

    // Assert
    const sentKeys = [...new Set(server.received.flatMap((request) => requestHeaders(request, 'App-key')))];
    expect(sentKeys).toHaveLength(2);
    expect(run.code).toBe(1);
    expect(run.stdout).toContain('<redacted>');
    for (const key of sentKeys) expect(runsOf(run.stdout + run.stderr, key)).toEqual([]);
  });
});
