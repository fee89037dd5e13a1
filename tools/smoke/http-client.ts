import {
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { errorCode, errorMessage, errorName } from '../../shared/errors';
import type { SmokeRequest } from './checks';
import { headerMap, type Outcome } from './outcome';

/** Per request, from connecting to the last byte. API Gateway itself gives up on an integration after 29 s. */
export const REQUEST_TIMEOUT_MS = 10_000;

/** The API's answers are a few dozen bytes; anything this large is not one of them. */
export const MAX_ANSWER_BYTES = 64 * 1024;

export interface SendOptions {
  readonly timeoutMs?: number;
  readonly maxAnswerBytes?: number;
}

/** Thrown into the request by our own deadline, to tell it from the socket's errors. */
const DEADLINE_CODE = 'SMOKE_DEADLINE';
const TOO_LARGE_CODE = 'SMOKE_ANSWER_TOO_LARGE';

const UNREACHABLE: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host name not found',
  EAI_AGAIN: 'host name lookup failed',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
};

/**
 * TLS failures: certificate problems carry OpenSSL's codes (CERT_HAS_EXPIRED, DEPTH_ZERO_SELF_SIGNED_CERT, …) or
 * ERR_TLS_*; a peer that does not speak TLS gives EPROTO.
 */
function isTlsCode(code: string): boolean {
  return (
    code === 'EPROTO' ||
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    /CERT|SELF_SIGNED|UNABLE_TO_/.test(code)
  );
}

function codedError(code: string, message: string): Error {
  return Object.assign(new Error(message), { code });
}

/** One line for a request that got no answer. Node's messages name hosts and headers, never header values. */
export function describeNoAnswer(error: unknown, timeoutMs: number): Extract<Outcome, { kind: 'no-answer' }> {
  const code = errorCode(error) ?? '';
  if (code === DEADLINE_CODE) {
    return { kind: 'no-answer', reason: `no answer within ${timeoutMs / 1000} s`, unreachable: true };
  }
  if (code === TOO_LARGE_CODE) {
    return { kind: 'no-answer', reason: errorMessage(error) ?? 'answer too large', unreachable: false };
  }
  const known = UNREACHABLE[code];
  if (known !== undefined) return { kind: 'no-answer', reason: `${known} (${code})`, unreachable: true };
  if (isTlsCode(code))
    return { kind: 'no-answer', reason: `TLS handshake failed (${code})`, unreachable: true };
  if (code === 'ECONNRESET' || errorMessage(error) === 'socket hang up') {
    return { kind: 'no-answer', reason: 'connection closed without an answer', unreachable: false };
  }
  const firstLine = (errorMessage(error) ?? 'unknown error').split('\n', 1)[0] ?? '';
  return {
    kind: 'no-answer',
    reason: `${code || errorName(error) || 'Error'}: ${firstLine}`,
    unreachable: false,
  };
}

function flatHeaders(request: SmokeRequest, body: Buffer | undefined): string[] {
  // An array keeps every pair as its own header line, in order: a repeated App-key goes out twice.
  const flat = ['Host', request.url.host];
  for (const [name, value] of request.headers) flat.push(name, value);
  if (body !== undefined) flat.push('Content-Length', String(body.length));
  return flat;
}

function readAnswer(res: IncomingMessage, maxBytes: number, req: ClientRequest): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    res.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.destroy(codedError(TOO_LARGE_CODE, `answer body over ${maxBytes / 1024} KiB`));
        return;
      }
      chunks.push(chunk);
    });
    res.once('end', () => {
      resolve({
        kind: 'answer',
        answer: {
          status: res.statusCode ?? 0,
          headers: headerMap(res.rawHeaders),
          body: Buffer.concat(chunks, size).toString('utf8'),
        },
      });
    });
    res.once('error', reject);
  });
}

/**
 * Sends one request with node's own client, so the wire carries exactly the headers given (repeats, order,
 * absences), and reads the answer. Never rejects: a failure is an outcome. TLS certificates are verified.
 */
export function sendRequest(request: SmokeRequest, options: SendOptions = {}): Promise<Outcome> {
  const timeoutMs = options.timeoutMs ?? REQUEST_TIMEOUT_MS;
  const maxBytes = options.maxAnswerBytes ?? MAX_ANSWER_BYTES;
  const body = request.body === undefined ? undefined : Buffer.from(request.body, 'utf8');
  const requestOptions: RequestOptions = {
    protocol: request.url.protocol,
    hostname: request.url.hostname.replace(/^\[(.*)\]$/, '$1'),
    port: request.url.port,
    method: request.method,
    path: request.url.pathname,
    headers: flatHeaders(request, body),
    // A connection of its own: no state carried from one check to the next.
    agent: false,
  };

  return new Promise((resolve) => {
    const send = request.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(requestOptions);
    const deadline = setTimeout(() => {
      req.destroy(codedError(DEADLINE_CODE, 'deadline passed'));
    }, timeoutMs);
    const settle = (outcome: Outcome): void => {
      clearTimeout(deadline);
      resolve(outcome);
    };
    req.once('error', (error) => {
      settle(describeNoAnswer(error, timeoutMs));
    });
    req.once('response', (res) => {
      readAnswer(res, maxBytes, req).then(settle, (error: unknown) => {
        settle(describeNoAnswer(error, timeoutMs));
      });
    });
    req.end(body);
  });
}
