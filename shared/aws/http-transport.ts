import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Socket } from 'node:net';

/**
 * One HTTP attempt of an AWS call, over Node's own http/https stack with keep-alive connections: measured against
 * global fetch (undici), whose first use costs a cold start far more (`npm run bench -- --only client`).
 */
export interface HttpAttempt {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The TCP (and TLS) connect, when the attempt opens a connection. */
  readonly connectionTimeoutMs: number;
  /** From sending to the response's headers (connect included); also the longest silence while the body arrives. */
  readonly attemptTimeoutMs: number;
  /** On a connection of its own, closed after it: a retry never meets the connection that just failed it. */
  readonly freshConnection: boolean;
  readonly signal?: AbortSignal;
}

export interface HttpAnswer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

export type HttpTransport = (attempt: HttpAttempt) => Promise<HttpAnswer>;

/** An answer larger than this is not AWS's JSON (a secret value is at most 64 KB): refused rather than buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * An attempt that timed out. `sent` says whether the request may have reached the service: false only when the
 * connection was never made, so a write cannot have landed.
 */
export class AttemptTimeoutError extends Error {
  override readonly name = 'TimeoutError';

  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

/** The caller gave up on the attempt (its deadline, or the limiter's budget). */
export class AttemptAbortedError extends Error {
  override readonly name = 'AbortError';
}

/** The answer could not be read whole (too large). */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
}

/** An answer cut off midway, as Node (and so the SDK) names it: `Error: aborted`, code ECONNRESET. */
function cutOff(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}

/** Connections kept open between calls, as the SDK keeps them: a warm environment's calls skip TCP and TLS. */
const KEEP_ALIVE = { keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 50 } as const;

function headersOf(response: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** An HttpTransport over node:http and node:https, each with its own keep-alive agent. */
export function createNodeHttpTransport(): HttpTransport {
  const agents = { 'http:': new HttpAgent(KEEP_ALIVE), 'https:': new HttpsAgent(KEEP_ALIVE) };
  return (attempt) =>
    new Promise<HttpAnswer>((resolve, reject) => {
      const { url } = attempt;
      const secure = url.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      const agentOf = secure ? agents['https:'] : agents['http:'];
      let settled = false;
      let connected = false;
      const timers: NodeJS.Timeout[] = [];
      const clearTimers = (): void => {
        for (const timer of timers.splice(0)) clearTimeout(timer);
      };
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        clearTimers();
        attempt.signal?.removeEventListener('abort', onAbort);
        outcome();
      };
      const fail = (error: Error): void => {
        finish(() => {
          reject(error);
        });
        // Never reused: a connection that failed or timed out is closed, not handed to the next call.
        request.destroy();
      };
      const onAbort = (): void => {
        fail(new AttemptAbortedError('the attempt was abandoned'));
      };

      const request: ClientRequest = send({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: attempt.headers,
        // A fresh connection is one of its own (a one-off agent without keep-alive).
        agent: attempt.freshConnection ? false : agentOf,
      });

      timers.push(
        setTimeout(() => {
          fail(
            new AttemptTimeoutError(
              `no answer within the ${attempt.attemptTimeoutMs} ms attempt time-out`,
              connected,
            ),
          );
        }, attempt.attemptTimeoutMs),
      );
      request.once('socket', (socket: Socket) => {
        if (!socket.connecting) {
          connected = true;
          return;
        }
        const connectTimer = setTimeout(() => {
          fail(
            new AttemptTimeoutError(
              `did not establish a connection within the ${attempt.connectionTimeoutMs} ms connection time-out`,
              false,
            ),
          );
        }, attempt.connectionTimeoutMs);
        timers.push(connectTimer);
        socket.once(secure ? 'secureConnect' : 'connect', () => {
          connected = true;
          clearTimeout(connectTimer);
        });
      });
      let answering = false;
      request.once('error', (error) => {
        // A connection lost once the answer has begun is an answer cut off, whichever side saw it first.
        fail(answering ? cutOff() : error);
      });
      request.once('response', (response) => {
        answering = true;
        clearTimers();
        const chunks: Buffer[] = [];
        let size = 0;
        // The body must keep coming: a silence as long as an attempt ends it. A timer of our own, not the socket's
        // time-out, which would stay on the connection once it is back in the pool and close it there.
        let silence: NodeJS.Timeout | undefined;
        const awaitMore = (): void => {
          clearTimeout(silence);
          silence = setTimeout(() => {
            fail(new AttemptTimeoutError(`the answer stalled for ${attempt.attemptTimeoutMs} ms`, true));
          }, attempt.attemptTimeoutMs);
          timers.push(silence);
        };
        awaitMore();
        response.on('data', (chunk: Buffer) => {
          awaitMore();
          size += chunk.length;
          if (size > MAX_ANSWER_BYTES) {
            fail(new AnswerTooLargeError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.once('aborted', () => {
          fail(cutOff());
        });
        response.once('error', () => {
          fail(cutOff());
        });
        response.once('end', () => {
          finish(() => {
            resolve({
              status: response.statusCode ?? 0,
              headers: headersOf(response),
              body: Buffer.concat(chunks).toString('utf8'),
            });
          });
        });
      });

      if (attempt.signal?.aborted === true) {
        onAbort();
        return;
      }
      attempt.signal?.addEventListener('abort', onAbort, { once: true });
      request.end(attempt.body);
    });
}
