/**
 * The benchmark's alternative transport (npm run bench -- --only client): the same seam as
 * shared/aws/http-transport.ts over the global fetch (undici), swapped into the payment bundle by an esbuild plugin
 * to measure what each costs a cold start. Not part of the product. The caller's budget is kept (its AbortSignal),
 * and the socket time-out as a time-out on the whole attempt; the connection time-out and a fresh connection for a
 * retry are not (fetch has neither), which changes nothing on the path measured: one answered call.
 */
import type { TransportAnswer, HttpTransport } from '../../../shared/aws/http-transport';

export { AttemptError, AnswerTooLargeError, MAX_ANSWER_BYTES } from '../../../shared/aws/http-transport';

export function createNodeHttpTransport(): HttpTransport {
  return async (attempt): Promise<TransportAnswer> => {
    const signal =
      attempt.socketTimeoutMs === undefined
        ? attempt.signal
        : AbortSignal.any([AbortSignal.timeout(attempt.socketTimeoutMs), attempt.signal]);
    // fetch sets Host and Content-Length itself, and refuses them from the caller.
    const headers = Object.fromEntries(
      Object.entries(attempt.headers).filter(([name]) => name !== 'Host' && name !== 'Content-Length'),
    );
    const response = await fetch(attempt.url, { method: 'POST', headers, body: attempt.body, signal });
    const body = await response.text();
    return { status: response.status, headers: Object.fromEntries(response.headers), body };
  };
}
