/**
 * Fixed windows: an app may make `burst` requests in each window of `burst / perSecond` seconds. At the steady rate
 * of 20 a second with a burst of 20, that is 20 in each second. One counter per app and window is what makes one
 * conditional increment enough to share the limit across execution environments, and no more than one DynamoDB call
 * per request.
 *
 * Each app's windows start at an offset of its own, a stable function of its app id (windowOffsetMs), so that every
 * execution environment agrees on them without talking to the others, and apps do not share edges: the clients that
 * `Retry-After` sends back at a window's end come back at their own app's edge, not all at once (the herd that
 * draft-ietf-httpapi-ratelimit-headers-11 §8.5 warns of).
 *
 * The precision traded for it: within a window the requests may come all at once (that is the burst), so across a
 * window boundary up to twice the burst may pass in a moment, where a token bucket would spread them; over any
 * window the count is exact.
 */
import { appHashKey } from '../../../shared/keys/shard';
import type { RateLimit } from '../../../shared/keys/rate-limit';
import { boundedMemo } from './bounded-memo';

export type { RateLimit } from '../../../shared/keys/rate-limit';

export interface LimitWindow {
  /** Which window of this app and limit, counted from the epoch: part of the counter's key. */
  readonly index: number;
  /** When it ends, epoch milliseconds. */
  readonly endMs: number;
  /** Requests it admits. */
  readonly capacity: number;
}

export function windowLengthMs(limit: RateLimit): number {
  return (limit.burst / limit.perSecond) * 1000;
}

const TWO_TO_THE_64 = 2 ** 64;

/**
 * Where an app's windows start within the window length: the first 8 bytes of SHA-256 of the app id's UTF-8 bytes,
 * read as an unsigned 64-bit big-endian integer (the same key the registry places apps by: shared/keys/shard.ts),
 * as a fraction of 2^64, times the length. Stable across environments, deploys and restarts; spread evenly over the
 * window whatever the ids look like.
 */
export function windowOffsetMs(appId: string, lengthMs: number): number {
  return offsetFraction(appId) * lengthMs;
}

const offsetFraction = boundedMemo(
  4_096,
  (appId: string) => appId,
  (appId) => Number(appHashKey(appId)) / TWO_TO_THE_64,
);

/** The window of `appId` under `limit` that `now` falls in. */
export function appWindowAt(appId: string, limit: RateLimit, now: number): LimitWindow {
  const lengthMs = windowLengthMs(limit);
  const offsetMs = windowOffsetMs(appId, lengthMs);
  const index = Math.floor((now - offsetMs) / lengthMs);
  return { index, endMs: (index + 1) * lengthMs + offsetMs, capacity: limit.burst };
}
