import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { AnswerTooLargeError, answerCutOff } from './attempt-errors';
import { setAbortSignal } from './set-abort-signal';
import { setConnectionTimeout } from './set-connection-timeout';
import { setSocketTimeout } from './set-socket-timeout';

export { AnswerTooLargeError, AttemptError } from './attempt-errors';

/**
 * One HTTP attempt of an AWS call, over Node's own http/https stack with keep-alive connections: measured against
 * global fetch (undici), whose first use costs a cold start far more (`npm run bench -- --only client`).
 */
export interface HttpAttempt {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** The TCP (and TLS) connect, when the attempt opens a connection: past it, nothing was sent. */
  readonly connectionTimeoutMs: number;
  /**
   * The longest silence once connected: before the answer starts, and while its body arrives. Absent: none of the
   * attempt's own; the caller's signal bounds it.
   */
  readonly socketTimeoutMs?: number;
  /** On a connection of its own, closed after it: a retry never meets the connection that just failed it. */
  readonly freshConnection: boolean;
  /** The caller's budget for the whole call (and its giving up): the attempt ends as soon as it aborts. */
  readonly signal: AbortSignal;
}

export interface TransportAnswer {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

export type HttpTransport = (attempt: HttpAttempt) => Promise<TransportAnswer>;

/** An answer larger than this is not AWS's JSON (a secret value is at most 64 KB): refused rather than buffered. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

/** Connections kept open between calls, as the SDK keeps them: a warm environment's calls skip TCP and TLS. */
const KEEP_ALIVE = { keepAlive: true, keepAliveMsecs: 1_000, maxSockets: 50 } as const;

function headersOf(response: IncomingMessage): Record<string, string | undefined> {
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return headers;
}

/** Reads the answer whole (at most MAX_ANSWER_BYTES); `fail` gets a cut-off or an oversized answer. */
function readAnswer(
  response: IncomingMessage,
  done: (answer: TransportAnswer) => void,
  fail: (error: Error) => void,
): void {
  const chunks: Buffer[] = [];
  let size = 0;
  response.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) {
      fail(new AnswerTooLargeError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`));
      return;
    }
    chunks.push(chunk);
  });
  response.once('aborted', () => {
    fail(answerCutOff());
  });
  response.once('error', () => {
    fail(answerCutOff());
  });
  response.once('end', () => {
    done({
      status: response.statusCode ?? 0,
      headers: headersOf(response),
      body: Buffer.concat(chunks).toString('utf8'),
    });
  });
}

/**
 * An HttpTransport over node:http and node:https, each with its own keep-alive agent. An attempt keeps two timers
 * of its own, connect and socket (set-connection-timeout.ts, set-socket-timeout.ts); the caller's signal
 * (set-abort-signal.ts) ends it at the caller's budget. Every way it ends says whether the request was sent.
 */
export function createNodeHttpTransport(): HttpTransport {
  const agents = { 'http:': new HttpAgent(KEEP_ALIVE), 'https:': new HttpsAgent(KEEP_ALIVE) };
  return (attempt) =>
    new Promise<TransportAnswer>((resolve, reject) => {
      const { url } = attempt;
      const secure = url.protocol === 'https:';
      const send = secure ? httpsRequest : httpRequest;
      let settled = false;
      let connected = false;
      let answering = false;
      const cleanUp: (() => void)[] = [];
      const finish = (outcome: () => void): void => {
        if (settled) return;
        settled = true;
        for (const clear of cleanUp.splice(0)) clear();
        outcome();
      };
      const fail = (error: Error): void => {
        if (settled) return;
        finish(() => {
          reject(error);
        });
        // Never reused: a connection that failed or timed out is closed, not handed to the next call.
        request.destroy();
      };

      const request: ClientRequest = send({
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: attempt.headers,
        // A fresh connection is one of its own (a one-off agent without keep-alive).
        agent: attempt.freshConnection ? false : agents[secure ? 'https:' : 'http:'],
      });
      cleanUp.push(
        setConnectionTimeout(
          request,
          attempt.connectionTimeoutMs,
          secure,
          () => {
            connected = true;
          },
          fail,
        ),
      );
      if (attempt.socketTimeoutMs !== undefined) setSocketTimeout(request, attempt.socketTimeoutMs, fail);
      request.once('error', (error) => {
        // A connection lost once the answer has begun is an answer cut off, whichever side saw it first.
        fail(answering ? answerCutOff() : error);
      });
      request.once('response', (response) => {
        answering = true;
        readAnswer(
          response,
          (answer) => {
            finish(() => {
              resolve(answer);
            });
          },
          fail,
        );
      });
      cleanUp.push(setAbortSignal(attempt.signal, () => connected, fail));
      // A signal aborted already has ended the attempt: nothing is sent.
      if (!attempt.signal.aborted) request.end(attempt.body);
    });
}
