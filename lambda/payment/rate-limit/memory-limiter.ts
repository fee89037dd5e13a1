import type { RateLimit } from '../../../shared/keys/rate-limit';
import { wholeSeconds, type LimitDecision, type RateLimiter } from './limiter';
import { windowAt } from './window';

/**
 * The limiter of one process (`npm start`): the same windows as the shared one, its counts in a map. One process
 * needs no shared store; several would each count on their own.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const counts = new Map<string, { readonly index: number; used: number }>();
  return {
    check(appId: string, limit: RateLimit): Promise<LimitDecision> {
      const at = now();
      const window = windowAt(limit, at);
      let count = counts.get(appId);
      if (count === undefined || count.index !== window.index) {
        count = { index: window.index, used: 0 };
        counts.set(appId, count);
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
