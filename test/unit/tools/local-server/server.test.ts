import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { LocalServer } from '../../../../tools/local-server/server';
import { errorBody } from '../../../../shared/api/responses';
import type { Logger } from '../../../../shared/logger';
import { send as sendRequest, type Reply } from '../../../support/local-server-process';

/** One HTTP request to the server under test; raw header lists (repeats, casing) go out as written. */
function send(
  port: number,
  options: { method?: string; path?: string; rawHeaders?: string[]; body?: string | Buffer },
): Promise<Reply> {
  return sendRequest(`http://127.0.0.1:${port}`, {
    method: options.method,
    path: options.path,
    headers: options.rawHeaders,
    body: options.body,
  });
}

const silentLogger: Logger = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };

const okResult: APIGatewayProxyResult = {
  statusCode: 200,
  headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
  body: '{"code":"ok","message":"fine"}',
};

describe('LocalServer', () => {
  let server: LocalServer;
  let port: number;
  let handler: jest.Mock<Promise<APIGatewayProxyResult>, [APIGatewayProxyEvent]>;

  async function start(maxBodyBytes?: number, logger: Logger = silentLogger): Promise<void> {
    server = new LocalServer({
      handler,
      logger,
      newRequestId: () => 'req-1',
      ...(maxBodyBytes === undefined ? {} : { maxBodyBytes }),
    });
    ({ port } = await server.listen(0, '127.0.0.1'));
  }

  beforeEach(() => {
    handler = jest.fn<Promise<APIGatewayProxyResult>, [APIGatewayProxyEvent]>().mockResolvedValue(okResult);
  });

  afterEach(async () => {
    await server.close(0);
  });

  it('hands the handler a proxy event built from the real request and sends its result back', async () => {
    // Arrange
    await start();

    // Act
    const reply = await send(port, {
      path: '/payment?x=1',
      rawHeaders: ['App-Id', 'demo', 'X-Dup', 'a', 'X-Dup', 'b', 'Content-Type', 'application/json'],
      body: '{"a":1}',
    });

    // Assert
    expect(reply.status).toBe(200);
    expect(reply.body).toBe(okResult.body);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(handler).toHaveBeenCalledTimes(1);
    const event = handler.mock.calls[0]?.[0];
    expect(event).toMatchObject({
      resource: '/payment',
      path: '/payment',
      httpMethod: 'POST',
      body: '{"a":1}',
      isBase64Encoded: false,
      queryStringParameters: { x: '1' },
      requestContext: { requestId: 'req-1', stage: 'local', identity: { sourceIp: '127.0.0.1' } },
    });
    expect(event?.headers['App-Id']).toBe('demo');
    expect(event?.headers['X-Dup']).toBe('b');
    expect(event?.multiValueHeaders['X-Dup']).toEqual(['a', 'b']);
  });

  it.each([
    { method: 'GET', path: '/payment', status: 405, error: 'methodNotAllowed' as const, allow: 'POST' },
    { method: 'POST', path: '/elsewhere', status: 404, error: 'notFound' as const, allow: undefined },
  ])(
    'answers $method $path with $status without invoking the handler',
    async ({ method, path, status, error, allow }) => {
      // Arrange
      await start();

      // Act
      const reply = await send(port, { method, path });

      // Assert
      expect(reply.status).toBe(status);
      expect(reply.body).toBe(errorBody(error));
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.headers['cache-control']).toBe('no-store');
      expect(reply.headers.allow).toBe(allow);
      expect(handler).not.toHaveBeenCalled();
    },
  );

  it.each([
    { name: 'a declared length over it', rawHeaders: ['Content-Length', '101'], bytes: 101, status: 413 },
    { name: 'a chunked body over it', rawHeaders: ['Transfer-Encoding', 'chunked'], bytes: 101, status: 413 },
    { name: 'a body exactly at it', rawHeaders: [], bytes: 100, status: 200 },
  ])('answers $status for $name (a 100-byte limit), invoking the handler only for a 200', async (row) => {
    // Arrange
    await start(100);

    // Act
    const reply = await send(port, { rawHeaders: row.rawHeaders, body: 'x'.repeat(row.bytes) });

    // Assert
    const accepted = row.status === 200;
    expect([reply.status, reply.body]).toEqual([
      row.status,
      accepted ? okResult.body : errorBody('payloadTooLarge'),
    ]);
    expect(handler).toHaveBeenCalledTimes(accepted ? 1 : 0);
  });

  it('answers 500 internal_error JSON, without the error text, when the handler throws', async () => {
    // Arrange
    handler.mockRejectedValue(new Error('boom at secret place'));
    await start();

    // Act
    const reply = await send(port, {});

    // Assert
    expect(reply.status).toBe(500);
    expect(reply.body).toBe(errorBody('internalError'));
    expect(reply.body).not.toContain('boom');
    expect(reply.headers['content-type']).toBe('application/json');
    expect(reply.headers['cache-control']).toBe('no-store');
  });

  it('answers 502 bad_gateway, as API Gateway does, when the handler returns a malformed result', async () => {
    // Arrange
    handler.mockResolvedValue({ statusCode: 42, body: '' });
    await start();

    // Act
    const reply = await send(port, {});

    // Assert
    expect(reply.status).toBe(502);
    expect(reply.body).toBe(errorBody('badGateway'));
  });

  it('lets an in-flight request finish when closing, then stops accepting connections', async () => {
    // Arrange
    let release: () => void = () => undefined;
    let started: () => void = () => undefined;
    const handlerStarted = new Promise<void>((resolve) => {
      started = resolve;
    });
    handler.mockImplementation(
      () =>
        new Promise((resolve) => {
          release = () => {
            resolve(okResult);
          };
          started();
        }),
    );
    await start();
    const inFlight = send(port, {});
    await handlerStarted;

    // Act
    const closing = server.close(5_000);
    release();
    const reply = await inFlight;
    const { forced } = await closing;

    // Assert
    expect(reply.status).toBe(200);
    expect(reply.headers.connection).toBe('close');
    expect(forced).toBe(false);
    await expect(send(port, {})).rejects.toThrow(/ECONNREFUSED/);
  });

  describe('its log', () => {
    const KEY = `payk_${'K'.repeat(43)}`;
    let logger: { [level in keyof Logger]: jest.Mock };

    function startLogging(maxBodyBytes?: number): Promise<void> {
      logger = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
      return start(maxBodyBytes, logger);
    }

    const logged = (): string =>
      JSON.stringify(Object.values(logger).flatMap((level) => level.mock.calls as unknown[]));

    it.each<[string, { method?: string; path?: string; rawHeaders?: string[]; body?: string }, number]>([
      ['a path that is a key (404)', { path: `/${KEY}` }, 404],
      ['a key after the route (404)', { path: `/payment/${KEY}?key=${KEY}` }, 404],
      ['a body over the limit (413)', { path: `/${KEY}`, body: 'x'.repeat(101) }, 413],
    ])('never holds the path of %s: the route or its shape only', async (_label, request, status) => {
      // Arrange
      await startLogging(100);

      // Act
      const reply = await send(port, request);

      // Assert
      expect(reply.status).toBe(status);
      expect(logger.info).toHaveBeenCalledWith(
        'request refused',
        expect.objectContaining({ apiRequestId: 'req-1', status }) as unknown,
      );
      expect(logged()).not.toContain('KKKKKKKKKKKKKKKK');
      expect(logged()).not.toContain('payk_');
    });

    it('names the route of a refused request to /payment, and the shape of any other path', async () => {
      // Arrange
      await startLogging();

      // Act
      await send(port, { method: 'GET', path: '/payment' });
      await send(port, { path: `/${KEY}` });

      // Assert
      expect(logger.info.mock.calls).toEqual([
        [
          'request refused',
          {
            apiRequestId: 'req-1',
            method: 'GET',
            route: '/payment',
            status: 405,
            reason: 'method_not_allowed',
          },
        ],
        [
          'request refused',
          {
            apiRequestId: 'req-1',
            method: 'POST',
            pathLength: 49,
            pathSegments: 1,
            status: 404,
            reason: 'unknown_path',
          },
        ],
      ]);
    });
  });
});
