/**
 * The local server's real answers (npm start, as a user runs it) checked against openapi.yaml: each status
 * documented for its operation, each body valid for its schema, each required header present and valid.
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
import { AnswerValidator, loadOpenApiDocument, type ReceivedAnswer } from '../../support/openapi-document';

const APP_KEY = generateKey();
const validator = new AnswerValidator(loadOpenApiDocument());
let keysFile: string;
let server: LocalServerProcess;
let local: KeyFileServer;

beforeAll(async () => {
  local = await startLocalServerWithKeys(
    { demo: [APP_KEY] },
    // Short, so the 503 case below sees a broken key file within a second.
    { KEY_CACHE_TTL_SECONDS: '1', KEY_MAX_STALE_SECONDS: '0' },
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
