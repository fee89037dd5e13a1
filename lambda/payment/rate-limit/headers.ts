import type { RateLimit } from '../../../shared/keys/rate-limit';

/**
 * The rate-limit header fields of draft-ietf-httpapi-ratelimit-headers-11 (May 2026): `RateLimit-Policy`, the
 * app's quota as a whole number of requests per whole number of seconds, and `RateLimit`, what is left of it now.
 * Both are structured-field lists of one item named after the policy.
 */
export const RATE_LIMIT_POLICY_NAME = 'app';

/** The longest window the policy is written over: a rate with no whole quota per hour is rounded down. */
const MAX_WINDOW_SECONDS = 3_600;

/**
 * The rate as a whole quota per whole window: 20/s is q=20 per w=1, 0.5/s is q=1 per w=2, 0.3/s is q=3 per w=10.
 * A rate with no exact whole quota within an hour is rounded down to its whole requests per second (at least 1).
 */
export function quotaPerWindow(limit: RateLimit): { readonly quota: number; readonly windowSeconds: number } {
  for (let windowSeconds = 1; windowSeconds <= MAX_WINDOW_SECONDS; windowSeconds++) {
    const quota = limit.perSecond * windowSeconds;
    if (quota >= 1 && Math.abs(quota - Math.round(quota)) < 1e-9) {
      return { quota: Math.round(quota), windowSeconds };
    }
  }
  return { quota: Math.max(1, Math.floor(limit.perSecond)), windowSeconds: 1 };
}

export function policyHeader(limit: RateLimit): string {
  const { quota, windowSeconds } = quotaPerWindow(limit);
  return `"${RATE_LIMIT_POLICY_NAME}";q=${quota};w=${windowSeconds}`;
}

/** `RateLimit-Policy` and `RateLimit`: `remaining` requests may come within the next `seconds`. */
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
