import * as http from 'node:http';
import * as https from 'node:https';

/** The answer was not what a keys document needs; the message names the cause, never the content. */
export class FetchError extends Error {
  override readonly name = 'FetchError';
}

export interface FetchLimits {
  /** The whole exchange, connection to last byte. */
  readonly deadlineMs: number;
  /** Bytes of body read at most; a longer answer is abandoned. */
  readonly maxBytes: number;
}

/**
 * GET `url` and its body as UTF-8 text: status 200 only (a redirect is not followed), within `deadlineMs` from start to
 * the last byte, at most `maxBytes` of body. node:http(s) rather than fetch, so the byte cap holds while reading and a
 * stalled answer is destroyed at the deadline, not left to run on after the handler has moved on.
 */
export function fetchText(url: string, limits: FetchLimits): Promise<string> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    let settled = false;
    /** The first outcome wins; the exchange is torn down on every other path than a complete answer. */
    const settle = (outcome: { text: string } | { error: Error }): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if ('text' in outcome) {
        resolve(outcome.text);
      } else {
        request.destroy();
        reject(outcome.error);
      }
    };
    const request = client.get(
      target,
      { headers: { accept: 'application/json', 'user-agent': 'payment-api-secret-scanning' } },
      (response) => {
        if (response.statusCode !== 200) {
          settle({
            error: new FetchError(`the keys URL answered HTTP ${response.statusCode ?? 'without a status'}`),
          });
          return;
        }
        const chunks: Buffer[] = [];
        let bytes = 0;
        response.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > limits.maxBytes) {
            settle({ error: new FetchError(`the keys document is over ${limits.maxBytes} bytes`) });
            return;
          }
          chunks.push(chunk);
        });
        response.on('end', () => {
          settle({ text: Buffer.concat(chunks).toString('utf8') });
        });
        response.on('error', (error) => {
          settle({ error });
        });
      },
    );
    const timer = setTimeout(() => {
      settle({ error: new FetchError(`the keys URL did not answer within ${limits.deadlineMs} ms`) });
    }, limits.deadlineMs);
    request.on('error', (error) => {
      settle({ error });
    });
  });
}
