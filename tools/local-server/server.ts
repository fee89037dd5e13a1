import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { COMMON_HEADERS, errorBody, errorResponse, type ErrorName } from '../../shared/api/responses';
import { describeError, type Logger } from '../../shared/logger';
import {
  MalformedProxyResultError,
  splitTarget,
  toHttpResponse,
  toProxyEvent,
  type LocalHttpResponse,
} from './proxy-event';
import { loggedPath, routeRequest } from './routing';

/** API Gateway REST's payload limit. Larger bodies get 413 before the Lambda is invoked. */
export const API_GATEWAY_MAX_BODY_BYTES = 10 * 1024 * 1024;

/** The stage name the local server reports in `requestContext.stage`. */
export const LOCAL_STAGE = 'local';

/** A whole request (headers and body) must arrive within this; API Gateway's integration limit is 29 s. */
const REQUEST_TIMEOUT_MS = 30_000;

/** What the server invokes: it always hands over a complete REST proxy event (the payment handler takes any). */
export type ProxyEventHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

export interface LocalServerOptions {
  readonly handler: ProxyEventHandler;
  readonly logger: Logger;
  /** Default API_GATEWAY_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
  /** Injectable for tests. Default randomUUID. */
  readonly newRequestId?: () => string;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

type BodyReading =
  | { readonly kind: 'complete'; readonly body: Buffer }
  | { readonly kind: 'tooLarge' }
  | { readonly kind: 'aborted' };

function declaredTooLarge(req: IncomingMessage, maxBytes: number): boolean {
  const declared = Number(req.headers['content-length']);
  return Number.isFinite(declared) && declared > maxBytes;
}

/**
 * Reads the body up to `maxBytes`. A declared Content-Length over the limit is refused before any byte is
 * read; a body that grows past it (chunked) stops being read at that point. Nothing beyond the limit is kept.
 */
function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyReading> {
  if (declaredTooLarge(req, maxBytes)) return Promise.resolve({ kind: 'tooLarge' });

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (reading: BodyReading): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('close', onAbort);
      resolve(reading);
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        req.pause();
        finish({ kind: 'tooLarge' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      finish({ kind: 'complete', body: Buffer.concat(chunks, size) });
    };
    const onAbort = (): void => {
      finish({ kind: 'aborted' });
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('close', onAbort);
  });
}

/**
 * RFC 9112 §3.2: a server must answer 400 to an HTTP/1.1 request without a Host header, and to any request with
 * more than one. Counted in rawHeaders, since req.headers keeps only the first Host.
 */
function hostHeaderProblem(req: IncomingMessage): 'missing_host' | 'repeated_host' | undefined {
  let count = 0;
  for (let index = 0; index < req.rawHeaders.length; index += 2) {
    if (req.rawHeaders[index]?.toLowerCase() === 'host') count++;
  }
  if (count > 1) return 'repeated_host';
  const http11OrLater = req.httpVersionMajor > 1 || (req.httpVersionMajor === 1 && req.httpVersionMinor >= 1);
  return count === 0 && http11OrLater ? 'missing_host' : undefined;
}

function remoteAddress(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? '127.0.0.1';
  return address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
}

/** Answers for malformed HTTP, written straight to the socket (there is no request to answer). */
function rawErrorResponse(statusCode: number, reason: string, name: ErrorName): string {
  const body = errorBody(name);
  const headers = {
    ...COMMON_HEADERS,
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
  };
  const lines = Object.entries(headers).map(([header, value]) => `${header}: ${value}`);
  return `HTTP/1.1 ${statusCode} ${reason}\r\n${lines.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * The local stand-in for API Gateway: routes like the deployed API, enforces its body limit, turns each
 * request into a REST proxy event for the real handler, and the handler's result into the HTTP response.
 * Unexpected failures answer 500 `internal_error` JSON; details go to the log, never to the caller.
 */
export class LocalServer {
  private readonly server: Server;
  private readonly handler: ProxyEventHandler;
  private readonly logger: Logger;
  private readonly maxBodyBytes: number;
  private readonly newRequestId: () => string;
  private readonly now: () => number;
  private closing = false;

  constructor(options: LocalServerOptions) {
    this.handler = options.handler;
    this.logger = options.logger;
    this.maxBodyBytes = options.maxBodyBytes ?? API_GATEWAY_MAX_BODY_BYTES;
    this.newRequestId = options.newRequestId ?? randomUUID;
    this.now = options.now ?? Date.now;
    // requireHostHeader off: Node would answer a request without Host itself, in plain text; serve() answers it
    // in the API's JSON shape instead.
    this.server = createServer(
      { requestTimeout: REQUEST_TIMEOUT_MS, requireHostHeader: false },
      (req, res) => {
        void this.serve(req, res);
      },
    );
    // Node keeps only the first 2000 headers and drops the rest without a word, so a second App-key sent after
    // 2000 others went unseen. No count limit: the header section stays bounded by maxHeaderSize (431).
    this.server.maxHeadersCount = 0;
    // `Expect: 100-continue`: a body declared over the limit is refused before the client sends it.
    this.server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
      if (!declaredTooLarge(req, this.maxBodyBytes)) res.writeContinue();
      void this.serve(req, res);
    });
    this.server.on('clientError', (error: NodeJS.ErrnoException, socket: Socket) => {
      this.answerClientError(error, socket);
    });
  }

  /** Resolves with the bound address; rejects with the listen error (EADDRINUSE, EACCES). */
  listen(port: number, host: string): Promise<AddressInfo> {
    return new Promise((resolve, reject) => {
      const onError = (error: Error): void => {
        reject(error);
      };
      this.server.once('error', onError);
      this.server.listen(port, host, () => {
        this.server.off('error', onError);
        const address = this.server.address();
        if (address === null || typeof address === 'string') {
          reject(new Error('the server is not listening on a TCP port'));
          return;
        }
        resolve(address);
      });
    });
  }

  /**
   * Stops accepting connections, lets in-flight requests finish (their connections close after the response),
   * and after `graceMs` closes whatever is still open. Resolves once every connection is closed.
   */
  async close(graceMs: number): Promise<{ readonly forced: boolean }> {
    this.closing = true;
    const closed = new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
    this.server.closeIdleConnections();
    let forced = false;
    const deadline = setTimeout(() => {
      forced = true;
      this.server.closeAllConnections();
    }, graceMs);
    try {
      await closed;
    } finally {
      clearTimeout(deadline);
    }
    return { forced };
  }

  /** Drops every connection at once (a second Ctrl-C). */
  closeAllConnections(): void {
    this.server.closeAllConnections();
  }

  private async serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Errors after the answer (client gone) must not crash the server.
    req.on('error', () => undefined);
    res.on('error', () => undefined);
    const requestId = this.newRequestId();
    try {
      const outcome = await this.respond(req, requestId);
      if (outcome === undefined) return;
      this.write(res, outcome.response, outcome.closeConnection);
    } catch (error) {
      this.logger.error('unexpected error', {
        apiRequestId: requestId,
        status: 500,
        error: describeError(error),
      });
      if (res.headersSent) {
        res.destroy();
        return;
      }
      this.write(res, toHttpResponse(errorResponse('internalError', requestId)), true);
    }
  }

  private async respond(
    req: IncomingMessage,
    requestId: string,
  ): Promise<{ response: LocalHttpResponse; closeConnection: boolean } | undefined> {
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const { path } = splitTarget(target);
    // The method is one of the few node's parser accepts (anything else never gets here); the path goes by route
    // or shape only. The id stands for API Gateway's request id, so it has the handler's name for it.
    const logFields = { apiRequestId: requestId, method, ...loggedPath(path) };

    const reading = await readBody(req, this.maxBodyBytes);
    if (reading.kind === 'aborted') {
      this.logger.debug('request aborted by the client', logFields);
      return undefined;
    }
    if (reading.kind === 'tooLarge') {
      this.logger.info('request refused', { ...logFields, status: 413, reason: 'over_gateway_limit' });
      // The rest of the body is never read: close the connection after answering.
      return { response: toHttpResponse(errorResponse('payloadTooLarge', requestId)), closeConnection: true };
    }

    const hostProblem = hostHeaderProblem(req);
    if (hostProblem !== undefined) {
      this.logger.info('request refused', { ...logFields, status: 400, reason: hostProblem });
      return { response: toHttpResponse(errorResponse('clientError', requestId)), closeConnection: true };
    }

    const route = routeRequest(method, path);
    if (route.kind === 'gateway') {
      const response = toHttpResponse(errorResponse(route.error, requestId, route.headers));
      this.logger.info('request refused', {
        ...logFields,
        status: response.statusCode,
        reason: route.reason,
      });
      return { response, closeConnection: false };
    }

    const event = toProxyEvent(
      {
        method,
        target,
        rawHeaders: req.rawHeaders,
        body: reading.body,
        sourceIp: remoteAddress(req),
        protocol: `HTTP/${req.httpVersion}`,
      },
      { resource: route.resource, requestId, requestTimeEpoch: this.now(), stage: LOCAL_STAGE },
    );
    const result = await this.handler(event);
    try {
      return { response: toHttpResponse(result), closeConnection: false };
    } catch (error) {
      if (!(error instanceof MalformedProxyResultError)) throw error;
      // What API Gateway does with a malformed proxy result: 502.
      this.logger.error('malformed handler result', {
        apiRequestId: requestId,
        status: 502,
        error: describeError(error),
      });
      return { response: toHttpResponse(errorResponse('badGateway', requestId)), closeConnection: false };
    }
  }

  private write(res: ServerResponse, response: LocalHttpResponse, closeConnection: boolean): void {
    const hasLength = Object.keys(response.headers).some((name) => name.toLowerCase() === 'content-length');
    res.writeHead(response.statusCode, {
      ...response.headers,
      ...(hasLength ? {} : { 'Content-Length': String(response.body.length) }),
      ...(closeConnection || this.closing ? { Connection: 'close' } : {}),
    });
    res.end(response.body);
  }

  private answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const response =
      error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? rawErrorResponse(408, 'Request Timeout', 'clientError')
        : error.code === 'HPE_HEADER_OVERFLOW'
          ? rawErrorResponse(431, 'Request Header Fields Too Large', 'clientError')
          : rawErrorResponse(400, 'Bad Request', 'clientError');
    socket.end(response);
  }
}
