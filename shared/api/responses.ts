import type { APIGatewayProxyResult } from 'aws-lambda';

/**
 * Every error the API can answer with, Lambda's and API Gateway's alike. The stack builds its gateway
 * responses from this table and the local server its 404/405, so a caller sees one JSON shape everywhere.
 * Messages are fixed text: no per-request values.
 */
export const ERROR_RESPONSES = {
  badRequest: { statusCode: 400, code: 'bad_request', message: 'The request body is not valid JSON.' },
  unauthorized: { statusCode: 401, code: 'unauthorized', message: 'Missing or invalid App-id or App-key.' },
  forbidden: { statusCode: 403, code: 'forbidden', message: 'The request is not allowed.' },
  notFound: {
    statusCode: 404,
    code: 'not_found',
    message: 'No such resource. The API serves POST /payment.',
  },
  methodNotAllowed: {
    statusCode: 405,
    code: 'method_not_allowed',
    message: 'Method not allowed. /payment accepts POST only.',
  },
  payloadTooLarge: { statusCode: 413, code: 'payload_too_large', message: 'The request body is too large.' },
  unsupportedMediaType: {
    statusCode: 415,
    code: 'unsupported_media_type',
    message: 'Content-Type must be application/json.',
  },
  tooManyRequests: { statusCode: 429, code: 'too_many_requests', message: 'Too many requests. Retry later.' },
  clientError: { statusCode: 400, code: 'client_error', message: 'The request could not be processed.' },
  internalError: { statusCode: 500, code: 'internal_error', message: 'An internal error occurred.' },
  badGateway: { statusCode: 502, code: 'bad_gateway', message: 'The service failed to answer.' },
  unavailable: {
    statusCode: 503,
    code: 'unavailable',
    message: 'The service cannot check the request right now. Retry later.',
  },
  gatewayTimeout: {
    statusCode: 504,
    code: 'gateway_timeout',
    message: 'The service did not answer in time.',
  },
} as const;

export type ErrorName = keyof typeof ERROR_RESPONSES;

export const SUCCESS_BODY = { code: 'ok', message: 'Payment request accepted.' } as const;

/** Headers on every response. `no-store`: answers depend on credentials and must never be cached. */
export const COMMON_HEADERS = {
  'Content-Type': 'application/json',
  'Cache-Control': 'no-store',
  'X-Content-Type-Options': 'nosniff',
} as const;

/** RFC 9110 asks a 401 to name its scheme. */
export const UNAUTHORIZED_HEADERS = { 'WWW-Authenticate': 'App-key realm="payment-api"' } as const;

export const METHOD_NOT_ALLOWED_HEADERS = { Allow: 'POST' } as const;

export function errorBody(name: ErrorName): string {
  const { code, message } = ERROR_RESPONSES[name];
  return JSON.stringify({ code, message });
}

export function jsonResponse(
  statusCode: number,
  body: string,
  requestId: string | undefined,
  extraHeaders: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { ...COMMON_HEADERS, ...extraHeaders, ...(requestId ? { 'X-Request-Id': requestId } : {}) },
    body,
  };
}

export function errorResponse(
  name: ErrorName,
  requestId: string | undefined,
  extraHeaders: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return jsonResponse(ERROR_RESPONSES[name].statusCode, errorBody(name), requestId, extraHeaders);
}
