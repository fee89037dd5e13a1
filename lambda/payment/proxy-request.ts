import { RequestHeaders } from './headers';
import type { RequestBody } from './request-body';

/**
 * What the handler needs from a REST proxy event, read once at the boundary. The Lambda runtime hands the
 * handler whatever JSON it received, and events from test consoles and other tools leave out fields API
 * Gateway always sends, so the reader takes `unknown` and every field it yields has its declared type. An
 * absent field reads as its empty value; a field of the wrong type reads as documented on each property.
 */
export interface ProxyRequest {
  readonly headers: RequestHeaders;
  /** Absent or null: none. A string: text. Anything else: `notText`, refused after authentication. */
  readonly body: RequestBody;
  /** API Gateway's request id; undefined unless it is 1 to 128 visible ASCII characters (it goes in a header). */
  readonly requestId: string | undefined;
  /** The caller's address as API Gateway saw it; undefined unless it is 1 to 64 visible ASCII characters. */
  readonly sourceIp: string | undefined;
}

/** A property of a value that may be anything; undefined unless the value is a non-array object. */
function field(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined;
}

function visibleAscii(value: unknown, maxLength: number): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) return undefined;
  return /^[\x21-\x7e]+$/.test(value) ? value : undefined;
}

function readBody(event: unknown): RequestBody {
  const body = field(event, 'body');
  if (body === undefined || body === null) return { kind: 'none' };
  if (typeof body !== 'string') return { kind: 'notText' };
  // Only the boolean true means base64: a string "true" or a 1 is not what API Gateway sends.
  return { kind: 'text', text: body, isBase64Encoded: field(event, 'isBase64Encoded') === true };
}

/** API Gateway's request id alone, without reading the rest of the event. Never throws. */
export function readRequestId(event: unknown): string | undefined {
  return visibleAscii(field(field(event, 'requestContext'), 'requestId'), 128);
}

/** Never throws, whatever `event` is. */
export function readProxyRequest(event: unknown): ProxyRequest {
  return {
    headers: RequestHeaders.fromMaps(field(event, 'headers'), field(event, 'multiValueHeaders')),
    body: readBody(event),
    requestId: readRequestId(event),
    sourceIp: visibleAscii(field(field(field(event, 'requestContext'), 'identity'), 'sourceIp'), 64),
  };
}
