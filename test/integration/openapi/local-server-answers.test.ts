/**
 * The local server's real answers (npm start, as a user runs it, with per-app rate limits on) checked against
 * openapi.yaml: each status documented for its operation, each body valid for its schema, each required header
 * present and every header sent valid.
 */
import { writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { generateKey } from '../../../shared/keys/key-material';
import {
  credentials,
  send,
  SETUP_TIMEOUT_MS,
  startLocalServerWithKeys,
  type Call,
  type KeyFileServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { withinOneWindow } from '../../support/limit-windows';
import { AnswerValidator, loadOpenApiDocument, type ReceivedAnswer } from '../../support/openapi-document';
import { isLogField } from '../../../shared/log-fields';

const APP_KEY = generateKey();
/** One request per 1,000 s, for throttled and (should a window end during the test) throttled-2. */
const THROTTLED_LIMIT = { perSecond: 0.001, burst: 1 };
const THROTTLED_KEYS = { throttled: generateKey(), 'throttled-2': generateKey() };
/** throttled, or throttled-2 (same limit, not used before) when a window of the first ended during the first attempt. */
const throttledApp = (attempt: 0 | 1): keyof typeof THROTTLED_KEYS =>
  attempt === 0 ? 'throttled' : 'throttled-2';
const validator = new AnswerValidator(loadOpenApiDocument());
let keysFile: string;
let server: LocalServerProcess;
let local: KeyFileServer;

beforeAll(async () => {
  local = await startLocalServerWithKeys(
    {
      // Room for every request below; the server's default (APP_RATE_LIMIT) is for the others.
      demo: { keys: [APP_KEY], rateLimit: { perSecond: 1000, burst: 1000 } },
      // One request per 1,000 s: its second is refused however slowly the machine runs.
      throttled: { keys: [THROTTLED_KEYS.throttled], rateLimit: THROTTLED_LIMIT },
      'throttled-2': { keys: [THROTTLED_KEYS['throttled-2']], rateLimit: THROTTLED_LIMIT },
    },
    // Short, so the 503 case below sees a broken key file within a second.
    { KEY_CACHE_TTL_SECONDS: '1', KEY_MAX_STALE_SECONDS: '0', APP_RATE_LIMIT: '1' },
  );
  ({ server, keysFile } = local);
}, SETUP_TIMEOUT_MS);

afterAll(() => local.stop());

const json = ['Content-Type', 'application/json'];

describe('the local server answers as openapi.yaml documents', () => {
  it.each<[string, Call, number]>([
    ['a JSON body with the key', { headers: credentials('demo', APP_KEY), body: '{"amount":1000}' }, 200],
    ['no body with the key', { headers: credentials('demo', APP_KEY) }, 200],
    ['a wrong key', { headers: credentials('demo', generateKey()) }, 401],
    ['an unknown app', { headers: credentials('ghost', APP_KEY) }, 401],
    ['no credentials', { headers: json }, 401],
    ['App-key twice', { headers: [...credentials('demo', APP_KEY), 'App-key', APP_KEY] }, 401],
    [
      'text/plain',
      { headers: ['Content-Type', 'text/plain', 'App-id', 'demo', 'App-key', APP_KEY], body: 'hi' },
      415,
    ],
    ['a body that is not JSON', { headers: credentials('demo', APP_KEY), body: '{"amount":' }, 400],
    ['no body and no Content-Type, with the key', { headers: ['App-id', 'demo', 'App-key', APP_KEY] }, 415],
    [
      'a body over 64 KiB, with the key',
      { headers: credentials('demo', APP_KEY), body: `"${'a'.repeat(65_535)}"` },
      413,
    ],
    [
      'JSON nested 65 deep',
      { headers: credentials('demo', APP_KEY), body: '['.repeat(65) + ']'.repeat(65) },
      400,
    ],
    ['GET', { method: 'GET' }, 405],
    ['PUT', { method: 'PUT', headers: credentials('demo', APP_KEY), body: '{}' }, 405],
    ['PATCH', { method: 'PATCH' }, 405],
    ['DELETE', { method: 'DELETE' }, 405],
    ['OPTIONS', { method: 'OPTIONS' }, 405],
    ['another path', { path: '/payments', headers: credentials('demo', APP_KEY) }, 404],
    ['the root', { method: 'GET', path: '/' }, 404],
  ])('%s', async (_label, call, status) => {
    // Act
    const reply = await send(server.baseUrl, call);

    // Assert
    expect(reply.status).toBe(status);
    const path = new URL(call.path ?? '/payment', server.baseUrl).pathname;
    expect(validator.problems(call.method ?? 'POST', path, reply)).toEqual([]);
  });

  it('a body declared over the 10 MiB limit: 413', async () => {
    // Act: announce the body and wait for the verdict before sending it, as `Expect: 100-continue` allows.
    const reply = await rawExchange(
      server.baseUrl,
      'POST /payment HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
        `Content-Length: ${10 * 1024 * 1024 + 1}\r\nExpect: 100-continue\r\n\r\n`,
    );

    // Assert
    expect(reply.status).toBe(413);
    expect(validator.problems('POST', '/payment', reply)).toEqual([]);
  });

  it('an app over its rate limit: 429 with Retry-After and the RateLimit fields; its 200 had the fields too', async () => {
    // Act
    const [accepted, refused] = await withinOneWindow(
      (attempt) => [[throttledApp(attempt), THROTTLED_LIMIT]],
      async (attempt) => {
        const appId = throttledApp(attempt);
        const headers = credentials(appId, THROTTLED_KEYS[appId]);
        return [await send(server.baseUrl, { headers }), await send(server.baseUrl, { headers })] as const;
      },
    );

    // Assert
    expect([accepted.status, refused.status]).toEqual([200, 429]);
    for (const reply of [accepted, refused]) {
      expect(validator.problems('POST', '/payment', reply)).toEqual([]);
      expect(reply.headers['ratelimit-policy']).toBe('"app";q=1;w=1000');
      expect(reply.headers.ratelimit).toEqual(expect.any(String));
    }
    expect(refused.headers['retry-after']).toEqual(expect.any(String));
  });

  it('keys that cannot be read: 503', async () => {
    // Arrange
    await writeFile(keysFile, 'not JSON');
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    // Act
    const reply = await send(server.baseUrl, { headers: credentials('demo', APP_KEY) });

    // Assert
    expect(reply.status).toBe(503);
    expect(validator.problems('POST', '/payment', reply)).toEqual([]);
  });

  it("logged every line of this suite, the handler's and the server's own, in one vocabulary", async () => {
    // The lines travel through the server's stdout: wait for the last request's before reading them all.
    const deadline = Date.now() + 15_000;
    while (!server.output().includes('"status":503') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const entries = server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as Record<string, unknown>);

    const messages = new Set(entries.map((entry) => entry.message));
    expect([...messages].sort()).toEqual(
      [
        'keys loaded',
        'keys refresh failed',
        'keys unavailable',
        'request accepted',
        'request refused',
      ].sort(),
    );
    const unknownFields = entries.flatMap((entry) => Object.keys(entry).filter((name) => !isLogField(name)));
    expect(unknownFields).toEqual([]);
    const requestLines = entries.filter((entry) => typeof entry.status === 'number');
    expect(requestLines.length).toBeGreaterThan(18);
    for (const line of requestLines) expect(line.apiRequestId).toEqual(expect.any(String));
    const statusesByReason = new Map<unknown, Set<unknown>>();
    for (const { reason, status } of requestLines) {
      if (reason !== undefined)
        statusesByReason.set(reason, (statusesByReason.get(reason) ?? new Set()).add(status));
    }
    expect([...statusesByReason].filter(([, statuses]) => statuses.size > 1)).toEqual([]);
  });

  it('would catch an answer the document does not allow', () => {
    const headers = {
      'content-type': 'application/json',
      'cache-control': 'no-store',
      'x-content-type-options': 'nosniff',
    };

    expect(
      validator.problems('POST', '/payment', {
        status: 401,
        headers,
        body: '{"code":"unknown_app","message":"x"}',
      }),
    ).toEqual([
      'body: data/code must be equal to constant',
      'required header X-Request-Id is missing',
      'required header WWW-Authenticate is missing',
    ]);
    expect(validator.problems('GET', '/payment', { status: 200, headers, body: '{}' })).toEqual([
      'GET /payment: status 200 is not documented',
    ]);
    expect(
      validator.problems('POST', '/payment', {
        status: 405,
        headers: { ...headers, 'x-request-id': 'r' },
        body: '{"code":"method_not_allowed","message":"x"}',
      }),
    ).toEqual(['body: data/code must be equal to constant']); // POST's 4XX: code client_error
    expect(
      validator.problems('POST', '/payment', {
        status: 429,
        headers: { ...headers, 'retry-after': '0', ratelimit: '"app";r=-1;t=1' },
        body: '{"code":"too_many_requests","message":"x"}',
      }),
    ).toEqual([
      'header Retry-After: data must match pattern "^[1-9][0-9]*$"',
      'header RateLimit: data must match pattern "^"app";r=(0|[1-9][0-9]*);t=[1-9][0-9]*$"',
    ]);
  });
});

/** Writes a raw request and reads the one answer: status, headers by lower-cased name, body. */
function rawExchange(baseUrl: string, request: string): Promise<ReceivedAnswer> {
  const { port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? NaN);
      if (!received.includes('\r\n\r\n') || !(body.length >= length)) return;
      socket.destroy();
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: body.slice(0, length) });
    });
    socket.once('error', reject);
    socket.write(request);
  });
}
