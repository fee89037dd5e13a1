/**
 * The small client over Node's HTTP stack against an AWS JSON service played by a loopback server: keep-alive, the
 * retry of a read on a fresh connection, one attempt for a write, each timer seen firing (connect, against a
 * listener that never accepts; socket, against one that accepts and stays silent, and one that answers half; the
 * caller's budget, against one that never stops trickling, and the caller aborting mid-flight), whether each says
 * the request was sent, and AWS's error answers read into the SDK's names.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { AWS_JSON_SERVICES } from '../../../../shared/aws/aws-environment';
import { AwsJsonClient, AwsServiceError, errorOfAnswer } from '../../../../shared/aws/aws-json-client';
import type { AttemptBounds } from '../../../../shared/aws/aws-json-client';
import { AttemptError } from '../../../../shared/aws/attempt-errors';
import { FAKE_CREDENTIALS } from '../../../support/fake-aws';
import { closeServer, listen } from '../../../support/fault-proxy';
import { startUnacceptingServer, type UnacceptingServer } from '../../../support/unaccepting-server';

type Answer = (request: IncomingMessage, response: ServerResponse, body: string) => void;

interface TestServer {
  readonly url: URL;
  /** TCP connections accepted. */
  connections(): number;
  /** Requests received, with their headers. */
  readonly requests: { readonly headers: IncomingMessage['headers']; readonly body: string }[];
  answer(next: Answer): void;
  close(): Promise<void>;
}

async function startServer(): Promise<TestServer> {
  let answer: Answer = (_request, response) => {
    response.end('{}');
  };
  const sockets = new Set<Socket>();
  let connections = 0;
  const requests: { headers: IncomingMessage['headers']; body: string }[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ headers: request.headers, body });
      answer(request, response, body);
    });
  });
  server.on('connection', (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  const port = await listen(server, 0);
  return {
    url: new URL(`http://127.0.0.1:${port}/`),
    connections: () => connections,
    requests,
    answer: (next) => {
      answer = next;
    },
    close: () => closeServer(server, sockets),
  };
}

function json(status: number, body: object, headers: Record<string, string> = {}): Answer {
  return (_request, response) => {
    const text = JSON.stringify(body);
    response.writeHead(status, {
      'Content-Type': 'application/x-amz-json-1.1',
      'Content-Length': String(Buffer.byteLength(text)),
      ...headers,
    });
    response.end(text);
  };
}

/** Short timers, so they fire quickly; the callers' budget (BUDGET_MS) far enough that it never hides them. */
const BOUNDS: AttemptBounds = {
  maxAttempts: 2,
  connectionTimeoutMs: 200,
  socketTimeoutMs: 150,
  retryDelayMs: 10,
};
const BUDGET_MS = 2_000;
/**
 * Tests that wait for one of the attempt's timers to fire set it shorter still: what it proves is that it fires, and
 * which comes first, so each timer a test contrasts stays several times apart from the other.
 */
const FIRING_MS = 50;

function clientFor(url: URL, bounds: AttemptBounds = BOUNDS): AwsJsonClient {
  return new AwsJsonClient({
    service: AWS_JSON_SERVICES.secretsManager,
    bounds,
    target: { url, region: 'eu-west-1' },
    credentials: () => Promise.resolve(FAKE_CREDENTIALS),
  });
}

/** A read, or a write, with the caller's budget: one signal made for the whole call. */
const read = (budgetMs = BUDGET_MS) => ({ idempotent: true, signal: AbortSignal.timeout(budgetMs) });
const write = (budgetMs = BUDGET_MS) => ({ idempotent: false, signal: AbortSignal.timeout(budgetMs) });

/** What the call rejected with, read as fields: Node's own errors come from another realm under jest. */
async function rejection(work: Promise<unknown>): Promise<Readonly<Record<string, unknown>>> {
  try {
    await work;
  } catch (error) {
    if (typeof error === 'object' && error !== null) return error as Record<string, unknown>;
    throw new Error('rejected with a non-object', { cause: error });
  }
  throw new Error('did not reject');
}

describe('AwsJsonClient over node:http', () => {
  let server: TestServer;

  beforeEach(async () => {
    server = await startServer();
  });

  afterEach(async () => {
    await server.close();
  });

  it('sends a signed AWS JSON POST, and keeps its connection for the next call', async () => {
    server.answer(json(200, { SecretString: '{"demo":"k"}' }));
    const client = clientFor(server.url);

    const first = await client.call('GetSecretValue', { SecretId: 's' }, read());
    const second = await client.call('GetSecretValue', { SecretId: 's' }, read());

    expect([first, second]).toEqual([{ SecretString: '{"demo":"k"}' }, { SecretString: '{"demo":"k"}' }]);
    expect(server.connections()).toBe(1);
    const [request] = server.requests;
    expect(request?.body).toBe('{"SecretId":"s"}');
    expect(request?.headers).toMatchObject({
      host: server.url.host,
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'secretsmanager.GetSecretValue',
      'content-length': '16',
    });
    expect(request?.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/secretsmanager\/aws4_request, SignedHeaders=content-length;content-type;host;x-amz-date;x-amz-target, Signature=[0-9a-f]{64}$/,
    );
  });

  it.each([
    ['a 500', json(500, { __type: 'InternalServiceError', message: 'oops' })],
    ['a throttle', json(400, { __type: 'ThrottlingException', message: 'Rate exceeded' })],
  ])('sends a read again once after %s, on a fresh connection', async (_label, failure) => {
    let calls = 0;
    server.answer((request, response, body) => {
      calls++;
      (calls === 1 ? failure : json(200, { SecretString: 'x' }))(request, response, body);
    });
    const client = clientFor(server.url);

    expect(await client.call('GetSecretValue', {}, read())).toEqual({ SecretString: 'x' });

    expect(server.requests).toHaveLength(2);
    expect(server.connections()).toBe(2);
  });

  it('gives up after its attempts, with the last answer named as the SDK names it', async () => {
    server.answer(json(400, { __type: 'ThrottlingException', message: 'Rate exceeded' }));

    const error = await rejection(clientFor(server.url).call('GetSecretValue', {}, read()));

    expect(error).toBeInstanceOf(AwsServiceError);
    expect([error.name, error.message, error.$fault]).toEqual([
      'ThrottlingException',
      'Rate exceeded',
      'client',
    ]);
    expect(server.requests).toHaveLength(BOUNDS.maxAttempts);
  });

  it.each([
    ['access denied', 'AccessDeniedException'],
    ['a missing secret', 'ResourceNotFoundException'],
    ['a KMS refusal', 'DecryptionFailure'],
  ])('never sends a read again after %s: the answer would be the same', async (_label, type) => {
    server.answer(json(400, { __type: type, message: 'no' }));

    const error = await rejection(clientFor(server.url).call('GetSecretValue', {}, read()));

    expect(error.name).toBe(type);
    expect(server.requests).toHaveLength(1);
  });

  it('never sends a write again, whatever its bounds say', async () => {
    server.answer(json(500, { __type: 'InternalServerError', message: 'oops' }));

    const error = await rejection(clientFor(server.url).call('UpdateItem', {}, write()));

    expect([error.name, error.$fault]).toEqual(['InternalServerError', 'server']);
    expect(server.requests).toHaveLength(1);
  });

  it.each<[string, Answer, number]>([
    ['whose connection stays silent, and sends the read again on a new connection', () => undefined, 2],
    [
      'whose answer stops halfway (one attempt)',
      (_request, response) => {
        response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1', 'Content-Length': '100' });
        response.write('{"Secret');
      },
      1,
    ],
  ])('ends an attempt %s at the socket time-out (seen firing), sent', async (_label, answer, attempts) => {
    server.answer(answer);
    const bounds = { ...BOUNDS, maxAttempts: attempts, socketTimeoutMs: FIRING_MS };

    const error = await rejection(clientFor(server.url, bounds).call('GetSecretValue', {}, read()));

    expect(error).toBeInstanceOf(AttemptError);
    expect([error.name, error.message, error.sent]).toEqual([
      'TimeoutError',
      `silent for the ${FIRING_MS} ms socket time-out`,
      true,
    ]);
    expect([server.requests.length, server.connections()]).toEqual([attempts, attempts]);
  });

  it("ends the whole call at the caller's budget, however the attempts go: an answer that never stops trickling", async () => {
    server.answer((_request, response) => {
      response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.1', 'Content-Length': '100000' });
      const timer = setInterval(() => response.write(' '), 20);
      response.on('close', () => {
        clearInterval(timer);
      });
    });
    const started = performance.now();

    const error = await rejection(clientFor(server.url).call('X', {}, read(300)));

    expect(error).toBeInstanceOf(AttemptError);
    expect([error.name, error.message, error.sent]).toEqual([
      'TimeoutError',
      'time budget ran out after sending',
      true,
    ]);
    // Not before the budget: neither timer of the attempt fired.
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(server.requests).toHaveLength(1);
  });

  it("ends the call at the caller's budget during the pause before a retry", async () => {
    server.answer(json(500, { __type: 'InternalServiceError', message: 'oops' }));

    const error = await rejection(
      clientFor(server.url, { ...BOUNDS, retryDelayMs: 5_000 }).call('X', {}, read(100)),
    );

    expect([error.name, error.sent]).toEqual(['TimeoutError', true]);
    expect(server.requests).toHaveLength(1);
  });

  it('fails as Node and the SDK name an answer cut off (Error: aborted, ECONNRESET), and sends a read again', async () => {
    server.answer((request, response) => {
      response.writeHead(200, { 'Content-Length': '100' });
      response.write('{"a', () => request.socket.destroy());
    });

    const error = await rejection(clientFor(server.url).call('X', {}, read()));

    expect([error.message, error.code]).toEqual(['aborted', 'ECONNRESET']);
    expect(server.requests).toHaveLength(2);
  });

  it('says a refused connection was never sent', async () => {
    const closed = server.url;
    await server.close();

    const error = await rejection(clientFor(closed, { ...BOUNDS, maxAttempts: 1 }).call('X', {}, write()));

    expect(error.code).toBe('ECONNREFUSED');
  });

  it('closes the attempt in flight when the caller aborts mid-flight, and says it was sent', async () => {
    server.answer(() => undefined);
    const abandon = new AbortController();
    const call = clientFor(server.url, { maxAttempts: 1, connectionTimeoutMs: 200 }).call(
      'X',
      {},
      { idempotent: false, signal: abandon.signal },
    );
    while (server.requests.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));

    abandon.abort();

    const error = await rejection(call);
    expect([error.name, error.message, error.sent]).toEqual(['AbortError', 'abandoned after sending', true]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.connections()).toBe(1);
  });

  it('sends nothing for a signal already aborted', async () => {
    const error = await rejection(
      clientFor(server.url).call('X', {}, { idempotent: false, signal: AbortSignal.abort() }),
    );

    expect([error.name, error.sent]).toEqual(['AbortError', false]);
    expect(server.requests).toHaveLength(0);
  });

  it('refuses a 2xx answer that is not a JSON object', async () => {
    server.answer((_request, response) => {
      response.end('<html>');
    });

    const error = await rejection(clientFor(server.url).call('X', {}, read()));

    expect([error.name, error.message]).toEqual([
      'MalformedAnswerError',
      'Secrets Manager answered X with text that is not JSON',
    ]);
  });
});

describe('AwsJsonClient against a host that does not answer', () => {
  // One host for both tests: it takes a connect time-out of its own to fill its accept queue, which stays full.
  let host: UnacceptingServer;

  beforeAll(async () => {
    host = await startUnacceptingServer();
  });

  afterAll(async () => {
    await host.close();
  });

  it('ends an attempt whose connection is not made at the connection time-out (seen firing), never sent, and makes a read a fresh connection again', async () => {
    const started = performance.now();

    const error = await rejection(
      clientFor(new URL(host.endpoint), { ...BOUNDS, connectionTimeoutMs: FIRING_MS }).call('X', {}, read()),
    );

    expect(error).toBeInstanceOf(AttemptError);
    expect([error.name, error.message, error.sent]).toEqual([
      'TimeoutError',
      `no connection within the ${FIRING_MS} ms connection time-out`,
      false,
    ]);
    // Two attempts of FIRING_MS and the pause between: not the budget's 2 s.
    expect(performance.now() - started).toBeGreaterThanOrEqual(2 * FIRING_MS);
    expect(performance.now() - started).toBeLessThan(BUDGET_MS);
  });

  it('says a call whose budget ran out before the connection was made was never sent', async () => {
    const error = await rejection(
      clientFor(new URL(host.endpoint), { maxAttempts: 1, connectionTimeoutMs: 5_000 }).call(
        'X',
        {},
        write(FIRING_MS),
      ),
    );

    expect(error).toBeInstanceOf(AttemptError);
    expect([error.name, error.message, error.sent]).toEqual([
      'TimeoutError',
      'time budget ran out before connecting',
      false,
    ]);
  });
});

describe('errorOfAnswer: an AWS JSON error read as the SDK reads it', () => {
  it.each<
    [
      string,
      { status: number; headers?: Record<string, string>; body: string },
      string,
      string,
      'client' | 'server',
    ]
  >([
    [
      "DynamoDB's namespaced __type",
      {
        status: 400,
        body: '{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"The conditional request failed"}',
      },
      'ConditionalCheckFailedException',
      'The conditional request failed',
      'client',
    ],
    [
      'a type with a URL after a colon, and Message in capitals',
      {
        status: 400,
        body: '{"__type":"AccessDeniedException:http://internal.amazon.com/coral/","Message":"denied"}',
      },
      'AccessDeniedException',
      'denied',
      'client',
    ],
    [
      'the x-amzn-errortype header first',
      {
        status: 400,
        headers: { 'x-amzn-errortype': 'ThrottlingException:http://x/' },
        body: '{"__type":"Other"}',
      },
      'ThrottlingException',
      'HTTP 400 without a message',
      'client',
    ],
    [
      "a proxy's page",
      { status: 502, body: '<html>Bad gateway</html>' },
      'UnknownError502',
      'HTTP 502 without a message',
      'server',
    ],
    [
      "Secrets Manager's own 5xx",
      { status: 500, body: '{"__type":"InternalServiceError","message":"try again"}' },
      'InternalServiceError',
      'try again',
      'server',
    ],
  ])('%s', (_label, answer, name, message, fault) => {
    const error = errorOfAnswer({ headers: {}, ...answer });

    expect([error.name, error.message, error.$fault, error.statusCode]).toEqual([
      name,
      message,
      fault,
      answer.status,
    ]);
  });
});
