/**
 * How one attempt of an AWS call ends without an answer. Each says whether the request may have reached the
 * service (`sent`): false only when the connection was never made, so a write cannot have landed. The send-once
 * limiter sends again only what was never sent (lambda/payment/rate-limit/dynamodb-counter-store.ts).
 */

/** The attempt's own connect or socket timer fired; named as the SDK names its time-outs. */
export class AttemptTimeoutError extends Error {
  override readonly name = 'TimeoutError';

  constructor(
    message: string,
    readonly sent: boolean,
  ) {
    super(message);
  }
}

/**
 * The caller's signal ended the attempt: its time budget ran out (a `TimeoutError` reason, as AbortSignal.timeout
 * gives; then named TimeoutError, as the SDK names a time-out) or it gave up (AbortError).
 */
export class AttemptAbortedError extends Error {
  override readonly name: 'TimeoutError' | 'AbortError';

  constructor(
    reason: unknown,
    readonly sent: boolean,
  ) {
    const budget = (reason as { readonly name?: unknown } | null)?.name === 'TimeoutError';
    const when = sent ? 'after the request was sent' : 'before a connection was made';
    super(budget ? `the call's time budget ran out ${when}` : `the call was abandoned ${when}`);
    this.name = budget ? 'TimeoutError' : 'AbortError';
  }
}

/** The answer could not be read whole (too large). */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
}

/** An answer cut off midway, as Node (and so the SDK) names it: `Error: aborted`, code ECONNRESET. */
export function answerCutOff(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}
