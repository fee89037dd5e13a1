/**
 * Fixed windows: an app may make `burst` requests in each window of `burst / perSecond` seconds, windows aligned on
 * the epoch so that every execution environment agrees on them. At the steady rate of 20 a second with a burst of
 * 20, that is 20 in each whole second. One counter per app and window is what makes one conditional increment
 * enough to share the limit across execution environments, and no more than one DynamoDB call per request.
 *
 * The precision traded for it: within a window the requests may come all at once (that is the burst), so across a
 * window boundary up to twice the burst may pass in a moment, where a token bucket would spread them; over any
 * window the count is exact.
 */
import type { RateLimit } from '../../../shared/keys/rate-limit';

export type { RateLimit } from '../../../shared/keys/rate-limit';

export interface LimitWindow {
  /** Which window, counted from the epoch: part of the counter's key. */
  readonly index: number;
  /** When it ends, epoch milliseconds. */
  readonly endMs: number;
  /** Requests it admits. */
  readonly capacity: number;
}

export function windowLengthMs(limit: RateLimit): number {
  return (limit.burst / limit.perSecond) * 1000;
}

/** The window `now` falls in. */
export function windowAt(limit: RateLimit, now: number): LimitWindow {
  const lengthMs = windowLengthMs(limit);
  const index = Math.floor(now / lengthMs);
  return { index, endMs: (index + 1) * lengthMs, capacity: limit.burst };
}
