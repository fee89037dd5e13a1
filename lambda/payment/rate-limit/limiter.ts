import type { RateLimit } from './window';

/**
 * What a request gets when the shared count cannot answer in time: this environment's own count decides (local:
 * the app's limit per environment, so at most environments × limit in all), it goes on uncounted (open), or 503
 * (closed).
 */
export type LimiterFailure = 'local' | 'open' | 'closed';

/** What the limiter says of one authenticated request. */
export type LimitDecision =
  | {
      readonly kind: 'accepted';
      /** Requests the app may still make in the current window. */
      readonly remaining: number;
      /** Whole seconds until the next window, when the count starts again. */
      readonly resetSeconds: number;
    }
  | {
      readonly kind: 'limited';
      /** Whole seconds, at least 1, before a retry can be accepted. */
      readonly retryAfterSeconds: number;
    }
  /**
   * The shared store could not count the request in time (slow, failing, refusing, throttling for no reason this
   * environment knows, or not asked: its breaker open): the caller fails as configured. `local` is what this
   * environment's own count of the app's window says (the shared limiter's; local-counts.ts), for `local`.
   */
  | { readonly kind: 'unavailable'; readonly error: string; readonly local?: LocalDecision };

/** A decision this environment makes from its own count (local-counts.ts). */
export type LocalDecision = Extract<LimitDecision, { readonly kind: 'accepted' | 'limited' }>;

/**
 * Counts an app's authenticated requests against its limit. The payment Lambda's is shared by every execution
 * environment (DynamoDB); the local server's lives in its one process.
 */
export interface RateLimiter {
  check(appId: string, limit: RateLimit): Promise<LimitDecision>;
}

/**
 * The most the shared limiter adds to a request: the check's time budget, one AbortSignal passed down to its store
 * call, which ends there whatever the store does. Past it the request goes on as if the store were down: the
 * handler fails open or closed.
 */
export const LIMITER_WORST_ADDED_MS = 150;

/** Whole seconds for a header: rounded up, and at least 1 so that a client never retries at once. */
export function wholeSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}
