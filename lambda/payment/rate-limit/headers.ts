import type { RateLimit } from '../../../shared/keys/rate-limit';

/**
 * The rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-11 (May 2026): `RateLimit-Policy`, the
 * app's quota as a whole number of requests per whole number of seconds, and `RateLimit`, what is left of it in the
 * current window. Both are structured-field lists of one item named after the policy.
 */
export const RATE_LIMIT_POLICY_NAME = 'app';

/** The longest window the rate is written over when the limit's own window is not whole seconds. */
const MAX_WINDOW_SECONDS = 3_600;

/** Within this of a whole number, a quotient of decimals is that number (0.3 × 10 is 3.0000000000000004). */
const EPSILON = 1e-9;

function wholeOrUndefined(value: number): number | undefined {
  const rounded = Math.round(value);
  return Math.abs(value - rounded) < EPSILON ? rounded : undefined;
}

/**
 * The policy: the limit's own window (window.ts) when it is whole seconds, so `q` requests may come at once, every
 * `w` seconds, exactly as counted: 20/s with a burst of 40 is q=40 per w=2. The draft's `w` is whole seconds, so a
 * window that is not (a burst of 30 at 20/s: 1.5 s) is written as the rate, a whole quota per whole window (20/s:
 * q=20 per w=1; 0.3/s: q=3 per w=10), or, with no exact one within an hour, its whole requests per second.
 */
export function quotaPerWindow(limit: RateLimit): { readonly quota: number; readonly windowSeconds: number } {
  const ownWindow = wholeOrUndefined(limit.burst / limit.perSecond);
  if (ownWindow !== undefined && ownWindow >= 1) return { quota: limit.burst, windowSeconds: ownWindow };
  for (let windowSeconds = 1; windowSeconds <= MAX_WINDOW_SECONDS; windowSeconds++) {
    const quota = wholeOrUndefined(limit.perSecond * windowSeconds);
    if (quota !== undefined && quota >= 1) return { quota, windowSeconds };
  }
  return { quota: Math.max(1, Math.floor(limit.perSecond)), windowSeconds: 1 };
}

export function policyHeader(limit: RateLimit): string {
  const { quota, windowSeconds } = quotaPerWindow(limit);
  return `"${RATE_LIMIT_POLICY_NAME}";q=${quota};w=${windowSeconds}`;
}

/** `RateLimit-Policy` and `RateLimit`: `remaining` requests may come before the window ends, in `seconds`. */
export function rateLimitHeaders(
  limit: RateLimit,
  remaining: number,
  seconds: number,
): Readonly<Record<string, string>> {
  return {
    'RateLimit-Policy': policyHeader(limit),
    RateLimit: `"${RATE_LIMIT_POLICY_NAME}";r=${remaining};t=${seconds}`,
  };
}

/** A 429's headers: the two fields with nothing left, and `Retry-After` no earlier than the window's end. */
export function limitedHeaders(
  limit: RateLimit,
  retryAfterSeconds: number,
): Readonly<Record<string, string>> {
  return { 'Retry-After': String(retryAfterSeconds), ...rateLimitHeaders(limit, 0, retryAfterSeconds) };
}
