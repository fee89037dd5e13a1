/**
 * The generic cell rate algorithm (GCRA), the token bucket expressed as one number per app: the theoretical arrival
 * time (TAT), when the app's bucket would be full again. A request at `now` is accepted while the TAT is no more than
 * the burst's worth of intervals ahead of `now`; each accepted request moves the TAT one interval further. One
 * number per app is what makes a single conditional write enough to share the limit across execution environments.
 */

import type { RateLimit } from '../../../shared/keys/rate-limit';

export type { RateLimit } from '../../../shared/keys/rate-limit';

export type GcraDecision =
  | {
      readonly accepted: true;
      /** The TAT to store. */
      readonly tat: number;
      /** Requests that would be accepted right after this one, at the same instant. */
      readonly remaining: number;
      /** Milliseconds until the bucket is full again. */
      readonly fullInMs: number;
    }
  | {
      readonly accepted: false;
      /** Milliseconds until one request would be accepted. */
      readonly retryAfterMs: number;
    };

/** Milliseconds between two requests at the steady rate. */
export function intervalMs(limit: RateLimit): number {
  return 1000 / limit.perSecond;
}

/** How far ahead of `now` the TAT may be for a request to be accepted: the burst, less the request itself. */
export function toleranceMs(limit: RateLimit): number {
  return (limit.burst - 1) * intervalMs(limit);
}

/** The decision for one request at `now`, given the stored TAT (undefined: never seen, or long idle). */
export function decide(tat: number | undefined, now: number, limit: RateLimit): GcraDecision {
  const interval = intervalMs(limit);
  const tolerance = toleranceMs(limit);
  const start = tat === undefined ? now : Math.max(tat, now);
  if (start - now > tolerance) return { accepted: false, retryAfterMs: start - tolerance - now };
  const next = start + interval;
  return {
    accepted: true,
    tat: next,
    remaining: Math.max(0, Math.floor((now + tolerance - next) / interval) + 1),
    fullInMs: next - now,
  };
}
