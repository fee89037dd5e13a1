import type { RateLimit } from '../../../shared/keys/rate-limit';
import { wholeSeconds, type LimitDecision, type RateLimiter } from './limiter';
import { appWindowAt, windowLengthMs } from './window';

/**
 * The limiter of one process (`npm start`): the same windows as the shared one (each app's offset included), its
 * counts in a map. One process needs no shared store; several would each count on their own.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const counts = new Map<string, { readonly index: number; used: number }>();
  return {
    check(appId: string, limit: RateLimit): Promise<LimitDecision> {
      const at = now();
      const window = appWindowAt(appId, limit, at);
      // Keyed by window length, as the shared limiter's items are: a limit changed within a window of the same
      // length counts on from what the window holds, at once.
      const key = `${appId}|${windowLengthMs(limit)}`;
      let count = counts.get(key);
      if (count === undefined || count.index !== window.index) {
        count = { index: window.index, used: 0 };
        counts.set(key, count);
      }
      const secondsLeft = wholeSeconds(window.endMs - at);
      if (count.used >= window.capacity) {
        return Promise.resolve({ kind: 'limited', retryAfterSeconds: secondsLeft });
      }
      count.used++;
      return Promise.resolve({
        kind: 'accepted',
        remaining: window.capacity - count.used,
        resetSeconds: secondsLeft,
      });
    },
  };
}
