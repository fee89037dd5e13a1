import { connect } from 'node:net';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { LocalServer } from '../../../../tools/local-server/server';
import { createHandler } from '../../../../lambda/payment/create-handler';
import { errorBody } from '../../../../shared/api/responses';
import { captureLogs, type CapturedLogs } from '../../../support/capture-logger';
import { DEMO_KEY, DEMO_NEXT_KEY, SECRET_STRING } from '../../../support/keys';

interface RawReply {
  readonly statusLine: string;
  /** Header names lower-cased; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Writes `request` byte for byte on a fresh TCP connection and reads until the server closes it. */
function sendRaw(port: number, request: string): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: '127.0.0.1' });
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => {
          const colon = line.indexOf(':');
          return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()];
        }),
      );
      resolve({ statusLine, headers, body: text.slice(end + 4) });
    });
    socket.end(request, 'latin1');
  });
}

/** A POST /payment request as raw bytes; `Connection: close` so each reply ends with the connection. */
function paymentRequest(headerLines: readonly string[], version = 'HTTP/1.1'): string {
  return `POST /payment ${version}\r\n${[...headerLines, 'Connection: close'].join('\r\n')}\r\n\r\n`;
}

/** Small header lines (5 bytes each), so thousands of them stay under Node's 16 KiB header limit. */
const filler = (count: number): string[] => Array.from({ length: count }, () => 'x:1');

const JSON_TYPE = 'Content-Type: application/json';
const HOST = 'Host: 127.0.0.1';

describe('the local server over raw TCP', () => {
  let server: LocalServer;
  let port: number;
  let logs: CapturedLogs;

  beforeEach(async () => {
    logs = captureLogs();
    const { keyring } = parseKeyring(SECRET_STRING);
    const handler = createHandler({
      keys: { getKeys: () => Promise.resolve({ keyring, stale: false }) },
      logger: logs.logger,
    });
    server = new LocalServer({ handler, logger: logs.logger, newRequestId: () => 'raw-1' });
    ({ port } = await server.listen(0, '127.0.0.1'));
  });

  afterEach(async () => {
    await server.close(0);
  });

  it('sees an App-key repeated after 2,500 other headers, past Node’s default count of 2000: 401', async () => {
    const reply = await sendRaw(
      port,
      paymentRequest([
        HOST,
        JSON_TYPE,
        'App-id: demo',
        `App-key: ${DEMO_KEY}`,
        ...filler(2_500),
        `App-key: ${DEMO_NEXT_KEY}`,
      ]),
    );

    expect(reply.statusLine).toBe('HTTP/1.1 401 Unauthorized');
    expect(reply.body).toBe(errorBody('unauthorized'));
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({ message: 'request refused', status: 401, reason: 'duplicate_header' }),
    );
  });

  it('accepts the same request with the key sent once, so the 401 above is the repeat', async () => {
    const reply = await sendRaw(
      port,
      paymentRequest([HOST, JSON_TYPE, 'App-id: demo', ...filler(2_500), `App-key: ${DEMO_KEY}`]),
    );

    expect(reply.statusLine).toBe('HTTP/1.1 200 OK');
  });

  it('answers 431 in the JSON shape when the header section is larger than Node accepts', async () => {
    const reply = await sendRaw(
      port,
      paymentRequest([HOST, ...filler(1_000).map((line) => line + 'y'.repeat(40))]),
    );

    expect(reply.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.body).toBe(errorBody('clientError'));
  });

  it.each([
    ['no Host header', [JSON_TYPE, 'App-id: demo', `App-key: ${DEMO_KEY}`], 'missing_host'],
    ['two Host headers', [HOST, HOST, JSON_TYPE, 'App-id: demo', `App-key: ${DEMO_KEY}`], 'repeated_host'],
  ])(
    'answers an HTTP/1.1 request with %s with 400 in the JSON shape, without the handler',
    async (_label, lines, reason) => {
      const reply = await sendRaw(port, paymentRequest(lines));

      expect(reply.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(reply.headers).toMatchObject({
        'content-type': 'application/json',
        'cache-control': 'no-store',
        'x-content-type-options': 'nosniff',
        'x-request-id': 'raw-1',
      });
      expect(reply.body).toBe(errorBody('clientError'));
      expect(logs.entries()).toContainEqual(expect.objectContaining({ status: 400, reason }));
      expect(logs.entries()).not.toContainEqual(expect.objectContaining({ message: 'request accepted' }));
    },
  );

  it('serves an HTTP/1.0 request without Host, which HTTP/1.0 allows', async () => {
    const reply = await sendRaw(
      port,
      paymentRequest([JSON_TYPE, 'App-id: demo', `App-key: ${DEMO_KEY}`], 'HTTP/1.0'),
    );

    expect(reply.statusLine).toMatch(/^HTTP\/1\.[01] 200 OK$/);
  });
});
