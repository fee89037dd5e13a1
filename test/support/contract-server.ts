import type { IncomingMessage } from 'node:http';
import { parseKeyring } from '../../shared/keys/keyring';
import { toHttpResponse, toProxyEvent, type LocalHttpResponse } from '../../tools/local-server/proxy-event';
import { routeRequest } from '../../tools/local-server/routing';
import { createHandler, type RequestLimits } from '../../lambda/payment/create-handler';
import { errorResponse } from '../../shared/api/responses';
import { createJsonLogger } from '../../shared/logger';
import { closeServer, readAll, serveOnLoopback } from './fault-proxy';

/** One request as the server received it. */
export interface ReceivedRequest {
  readonly method: string;
  /** The path without the stage prefix. */
  readonly path: string;
  /** node's rawHeaders: name, value, … repeats kept. */
  readonly rawHeaders: readonly string[];
  readonly body: string;
}

/** Rewrites the conforming answer to break one rule of the contract. */
export type Breakage = (request: ReceivedRequest, response: LocalHttpResponse) => LocalHttpResponse;

export interface ContractServer {
  /** The /payment URL, under a stage prefix as deployed: `http://127.0.0.1:<port>/prod/payment`. */
  readonly paymentUrl: string;
  /** Every request received so far. */
  readonly received: readonly ReceivedRequest[];
  close(): Promise<void>;
}

export const STAGE_PREFIX = '/prod';

export interface ContractServerOptions {
  /** Per-app rate limits for the handler, as the rate-limited Lambda has them. Default: none. */
  readonly limits?: RequestLimits;
}

/** The value of a request header (the last one), case-insensitively. */
export function requestHeader(request: ReceivedRequest, name: string): string | undefined {
  return requestHeaders(request, name).at(-1);
}

export function requestHeaders(request: ReceivedRequest, name: string): string[] {
  const values: string[] = [];
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    if (request.rawHeaders[index]?.toLowerCase() === name.toLowerCase())
      values.push(request.rawHeaders[index + 1] ?? '');
  }
  return values;
}

/**
 * A stand-in for a deployed API, built from the project's real parts (routing, REST proxy event, handler,
 * response catalogue) behind a stage prefix, so with no breakage it keeps the contract exactly; `breakage`
 * bends one rule. Loopback only, a free port.
 */
export async function startContractServer(
  keys: Readonly<Record<string, unknown>>,
  breakage: Breakage = (_request, response) => response,
  options: ContractServerOptions = {},
): Promise<ContractServer> {
  const { keyring } = parseKeyring(JSON.stringify(keys));
  const handler = createHandler({
    keys: { getKeys: () => Promise.resolve({ keyring, stale: false }) },
    logger: createJsonLogger('error', () => undefined),
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  });
  const received: ReceivedRequest[] = [];

  const answer = async (req: IncomingMessage): Promise<LocalHttpResponse> => {
    const method = req.method ?? 'GET';
    const target = req.url ?? '/';
    const path = target.startsWith(`${STAGE_PREFIX}/`)
      ? target.slice(STAGE_PREFIX.length)
      : `/not-staged${target}`;
    const body = await readAll(req);
    const request: ReceivedRequest = {
      method,
      path,
      rawHeaders: req.rawHeaders,
      body: body.toString('utf8'),
    };
    received.push(request);

    const route = routeRequest(method, path);
    const conforming =
      route.kind === 'gateway'
        ? toHttpResponse(errorResponse(route.error, undefined, route.headers))
        : toHttpResponse(
            await handler(
              toProxyEvent(
                {
                  method,
                  target: path,
                  rawHeaders: req.rawHeaders,
                  body,
                  sourceIp: '127.0.0.1',
                  protocol: 'HTTP/1.1',
                },
                {
                  resource: route.resource,
                  requestId: `test-${received.length}`,
                  requestTimeEpoch: Date.now(),
                  stage: 'prod',
                },
              ),
            ),
          );
    return breakage(request, conforming);
  };

  const { server, sockets, port } = await serveOnLoopback(async (req, res) => {
    const response = await answer(req);
    res.writeHead(response.statusCode, {
      ...response.headers,
      'Content-Length': String(response.body.length),
    });
    res.end(response.body);
  });

  return {
    paymentUrl: `http://127.0.0.1:${port}${STAGE_PREFIX}/payment`,
    received,
    close: () => closeServer(server, sockets),
  };
}

/** Helpers for breakages: a response with one header dropped or replaced, or a new body. */
export function withoutHeader(response: LocalHttpResponse, name: string): LocalHttpResponse {
  return {
    ...response,
    headers: Object.fromEntries(
      Object.entries(response.headers).filter(([header]) => header.toLowerCase() !== name.toLowerCase()),
    ),
  };
}

export function withHeader(response: LocalHttpResponse, name: string, values: string[]): LocalHttpResponse {
  return {
    ...withoutHeader(response, name),
    headers: { ...withoutHeader(response, name).headers, [name]: values },
  };
}

export function withBody(response: LocalHttpResponse, statusCode: number, body: string): LocalHttpResponse {
  return { ...response, statusCode, body: Buffer.from(body, 'utf8') };
}
