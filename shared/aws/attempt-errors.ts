/**
 * How one attempt of an AWS call ends without an answer, named as the SDK names its time-outs and aborts:
 * `TimeoutError` when a timer ran out (the attempt's connect or socket timer, or the caller's time budget, as
 * AbortSignal.timeout reports it), `AbortError` when the caller gave up. `sent` says whether the request may have
 * reached the service: false only when the connection was never made, so a write cannot have landed. The send-once
 * limiter sends again only what was never sent (lambda/payment/rate-limit/dynamodb-counter-store.ts).
 */
export class AttemptError extends Error {
  constructor(
    message: string,
    readonly sent: boolean,
    override readonly name: 'TimeoutError' | 'AbortError' = 'TimeoutError',
  ) {
    super(message);
  }
}

/** The attempt the caller's signal ended, for its `reason`: its time budget ran out, or it gave up. */
export function abortedAttempt(reason: unknown, sent: boolean): AttemptError {
  const budget = (reason as { readonly name?: unknown } | null)?.name === 'TimeoutError';
  return new AttemptError(
    `${budget ? 'time budget ran out' : 'abandoned'} ${sent ? 'after sending' : 'before connecting'}`,
    sent,
    budget ? 'TimeoutError' : 'AbortError',
  );
}

/** The answer could not be read whole (too large). */
export class AnswerTooLargeError extends Error {
  override readonly name = 'AnswerTooLargeError';
}

/** An answer cut off midway, as Node (and so the SDK) names it: `Error: aborted`, code ECONNRESET. */
export function answerCutOff(): Error {
  return Object.assign(new Error('aborted'), { code: 'ECONNRESET' });
}
