import { createServer, type Server, type Socket } from 'node:net';
import type { SmokeRequest } from '../../../../tools/smoke/checks';
import { describeNoAnswer, sendRequest } from '../../../../tools/smoke/http-client';
import { freeLoopbackPort } from '../../../support/loopback';

/** A TCP server that records the raw bytes of each request and answers as told. */
async function rawServer(
  onRequest: (socket: Socket, raw: string) => void,
): Promise<{ port: number; server: Server; raw: string[] }> {
  const raw: string[] = [];
  const server = createServer((socket) => {
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      const headerEnd = received.indexOf('\r\n\r\n');
      if (headerEnd === -1) return;
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(received)?.[1] ?? '0');
      if (received.length < headerEnd + 4 + length) return;
      raw.push(received);
      onRequest(socket, received);
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, server, raw };
}

const ANSWER =
  'HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nCache-Control: no-store\r\n' +
  'WWW-Authenticate: App-key realm="payment-api"\r\nX-Twice: a\r\nX-Twice: b\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}';

let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  servers = [];
});

async function start(onRequest: (socket: Socket, raw: string) => void) {
  const started = await rawServer(onRequest);
  servers.push(started.server);
  return started;
}

function request(port: number, overrides: Partial<SmokeRequest> = {}): SmokeRequest {
  return {
    method: 'POST',
    url: new URL(`http://127.0.0.1:${port}/prod/payment`),
    headers: [
      ['Content-Type', 'application/json'],
      ['App-id', 'demo'],
      ['App-key', 'first-key-0123456789'],
      ['App-key', 'second-key-0123456789'],
    ],
    body: '{"smokeTest":true}',
    ...overrides,
  };
}

describe('sendRequest', () => {
  it('puts every header pair on the wire as its own line, in order, with Host and Content-Length', async () => {
    // Arrange
    const { port, raw } = await start((socket) => socket.end(ANSWER));

    // Act
    await sendRequest(request(port));

    // Assert
    const [head = '', body] = (raw[0] ?? '').split('\r\n\r\n');
    const lines = head.split('\r\n');
    expect(lines[0]).toBe('POST /prod/payment HTTP/1.1');
    expect(lines.slice(1, 7)).toEqual([
      `Host: 127.0.0.1:${port}`,
      'Content-Type: application/json',
      'App-id: demo',
      'App-key: first-key-0123456789',
      'App-key: second-key-0123456789',
      'Content-Length: 18',
    ]);
    expect(body).toBe('{"smokeTest":true}');
  });

  it('sends no body and no Content-Length for a bodiless request, and omits what is not listed', async () => {
    const { port, raw } = await start((socket) => socket.end(ANSWER));

    await sendRequest(request(port, { method: 'GET', headers: [['App-id', 'demo']], body: undefined }));

    const head = (raw[0] ?? '').split('\r\n\r\n')[0] ?? '';
    expect(head.split('\r\n')[0]).toBe('GET /prod/payment HTTP/1.1');
    expect(head).not.toMatch(/content-length|app-key/i);
  });

  it('returns the status, every header value by lower-cased name, and the body', async () => {
    const { port } = await start((socket) => socket.end(ANSWER));

    const outcome = await sendRequest(request(port));

    expect(outcome).toEqual({
      kind: 'answer',
      answer: {
        status: 401,
        headers: new Map([
          ['content-type', ['application/json']],
          ['cache-control', ['no-store']],
          ['www-authenticate', ['App-key realm="payment-api"']],
          ['x-twice', ['a', 'b']],
          ['content-length', ['2']],
          ['connection', ['close']],
        ]),
        body: '{}',
      },
    });
  });

  const big = 'x'.repeat(100 * 1024);
  it.each<
    [
      string,
      ((socket: Socket) => void) | undefined,
      { timeoutMs?: number; maxAnswerBytes?: number },
      string,
      boolean,
    ]
  >([
    ['a refused connection', undefined, {}, 'connection refused (ECONNREFUSED)', true],
    ['no answer in time', () => undefined, { timeoutMs: 100 }, 'no answer within 0.1 s', true],
    [
      'an answer larger than any the API gives, not read to its end',
      (socket) =>
        socket.end(`HTTP/1.1 200 OK\r\nContent-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`),
      { maxAnswerBytes: 64 * 1024 },
      'answer body over 64 KiB',
      false,
    ],
    [
      'a connection closed without an answer',
      (socket) => socket.destroy(),
      {},
      'connection closed without an answer',
      false,
    ],
  ])('reports %s', async (_label, onRequest, options, reason, unreachable) => {
    const port = onRequest === undefined ? await freeLoopbackPort() : (await start(onRequest)).port;

    expect(await sendRequest(request(port), options)).toEqual({ kind: 'no-answer', reason, unreachable });
  });

  it('reports a TLS failure as unreachable: https to a server that speaks plain HTTP', async () => {
    // Answers whatever arrives (a TLS ClientHello) with plain HTTP.
    const server = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end(ANSWER));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;

    const outcome = await sendRequest(
      request(port, { url: new URL(`https://127.0.0.1:${port}/prod/payment`) }),
    );

    expect(outcome).toMatchObject({ kind: 'no-answer', unreachable: true });
    expect(outcome.kind === 'no-answer' ? outcome.reason : '').toMatch(
      /^TLS handshake failed \((EPROTO|ERR_SSL_[A-Z_]+)\)$/,
    );
  });
});

describe('describeNoAnswer', () => {
  it.each([
    ['ENOTFOUND', 'host name not found (ENOTFOUND)', true],
    ['EAI_AGAIN', 'host name lookup failed (EAI_AGAIN)', true],
    ['EHOSTUNREACH', 'host unreachable (EHOSTUNREACH)', true],
    ['CERT_HAS_EXPIRED', 'TLS handshake failed (CERT_HAS_EXPIRED)', true],
    ['ERR_TLS_CERT_ALTNAME_INVALID', 'TLS handshake failed (ERR_TLS_CERT_ALTNAME_INVALID)', true],
    ['EPIPE', 'EPIPE: write EPIPE', false],
  ])('%s: %s', (code, reason, unreachable) => {
    const error = Object.assign(new Error(code === 'EPIPE' ? 'write EPIPE' : 'failed'), { code });

    expect(describeNoAnswer(error, 10_000)).toEqual({ kind: 'no-answer', reason, unreachable });
  });
});
