import { raceWithTimeout } from '../timeout';

/**
 * How long one AWS SDK call may take, and how it ends when the service does not answer: the SDK clients of the
 * rotation Lambda, the registry monitor and the tools are built from one of these (bounded-client.ts), so no call
 * can hang. The payment Lambda's small client (aws-json-client.ts) is bounded otherwise: each call carries its
 * caller's budget as an AbortSignal, and the client keeps only its connect and socket timers (AttemptBounds).
 */
export interface CallBounds {
  /** Attempts per call, the first included. */
  readonly maxAttempts: number;
  /** One attempt's TCP connect. */
  readonly connectionTimeoutMs: number;
  /**
   * One attempt, from sending the request to the response's headers (connect included); also the longest
   * silence allowed while the body arrives.
   */
  readonly attemptTimeoutMs: number;
  /**
   * A fixed pause before each retry, throttling answers included, where the caller has its own spacing of calls
   * (the key cache) and cannot afford the SDK's back-off (up to 1 s after a throttling answer, 2026 defaults).
   * Absent: the SDK's standard back-off (the small client: the same, exponential with full jitter).
   */
  readonly retryDelayMs?: number;
  /** The whole call, every attempt and the back-off between them included: the caller never waits longer. */
  readonly callDeadlineMs: number;
}

/** The error a call fails with at its deadline; named as the SDK names its own time-outs. */
export class CallDeadlineError extends Error {
  override readonly name = 'TimeoutError';

  constructor(deadlineMs: number) {
    super(`the AWS call did not complete within ${deadlineMs} ms`);
  }
}

/** Settles `work` as it settles, or rejects with CallDeadlineError at `deadlineMs`, whichever comes first. */
export function withinDeadline<T>(work: Promise<T>, deadlineMs: number, onDeadline?: () => void): Promise<T> {
  return raceWithTimeout(work, deadlineMs, (): never => {
    onDeadline?.();
    throw new CallDeadlineError(deadlineMs);
  });
}
