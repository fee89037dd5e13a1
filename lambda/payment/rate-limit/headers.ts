import type { RateLimit } from '../../../shared/keys/rate-limit';
import { windowLengthMs } from './window';

/**
 * The rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-11 (May 2026): `RateLimit-Policy`, the
 * app's quota as a whole number of requests per whole number of seconds, and `RateLimit`, what is left of it. Both
 * are structured-field lists of one item named after the policy.
 *
 * Every figure is a promise the limiter keeps (window.ts): a client alone on its app that sends no more than `q`
 * requests in any `w` seconds, or no more than `r` in the next `t` seconds, is never refused.
 */
export const RATE_LIMIT_POLICY_NAME = 'app';

/** Within this of a whole number, a quotient of decimals is that number (0.3 × 10 is 3.0000000000000004). */
const EPSILON = 1e-9;

/**
 * The policy: the burst, once per window. The draft's `w` is a whole number of seconds. When the limit's window is
 * one (20/s with a burst of 40: q=40;w=2), that is exactly what the limiter counts. When it is not (a burst of 30
 * at 20/s: 1.5 s; 0.3/s with a burst of 1: 3.33 s; a burst of 10 at 1000/s: 10 ms), no whole-second window says it
 * exactly, and the window is rounded up (q=30;w=2; q=1;w=4; q=10;w=1): a client that paces itself by it is never
 * refused, and goes a little slower than the limit. Advertising the rate instead (0.3/s as q=3;w=10) would promise
 * what the limiter refuses: three requests at once, where its burst of 1 admits one a window.
 */
export function quotaPerWindow(limit: RateLimit): { readonly quota: number; readonly windowSeconds: number } {
  const seconds = windowLengthMs(limit) / 1000;
  const rounded = Math.round(seconds);
  const whole = Math.abs(seconds - rounded) < EPSILON ? rounded : Math.ceil(seconds);
  return { quota: limit.burst, windowSeconds: Math.max(1, whole) };
}

export function policyHeader(limit: RateLimit): string {
  const { quota, windowSeconds } = quotaPerWindow(limit);
  return `"${RATE_LIMIT_POLICY_NAME}";q=${quota};w=${windowSeconds}`;
}

/**
 * `RateLimit-Policy` and `RateLimit` for a request answered with `remaining` requests left in its window, which ends
 * within `seconds` (whole seconds, rounded up). The draft (§6, §8.5) asks servers to cap the ratio of the available
 * quota to the effective window, so that `r` over `t` never reads as a faster rate than the policy's: late in a
 * window, with more left than `q` per `w` allows over `t`, `r` is cut to that (q × t / w, rounded down). The
 * client may still send `r` within `t` and be counted: the rest of this window holds at least `r`, and the next one
 * `q`.
 */
export function rateLimitHeaders(
  limit: RateLimit,
  remaining: number,
  seconds: number,
): Readonly<Record<string, string>> {
  const { quota, windowSeconds } = quotaPerWindow(limit);
  const available = Math.min(remaining, Math.floor((quota * seconds) / windowSeconds));
  return {
    'RateLimit-Policy': policyHeader(limit),
    RateLimit: `"${RATE_LIMIT_POLICY_NAME}";r=${available};t=${seconds}`,
  };
}

/**
 * A 429's headers: nothing left, and `Retry-After` at the end of the app's window (draft §6: no earlier than the
 * effective window's end). A client that waits that long, alone on its app, is counted in the next window.
 */
export function limitedHeaders(
  limit: RateLimit,
  retryAfterSeconds: number,
): Readonly<Record<string, string>> {
  return { 'Retry-After': String(retryAfterSeconds), ...rateLimitHeaders(limit, 0, retryAfterSeconds) };
}
