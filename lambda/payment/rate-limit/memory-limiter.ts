import type { RateLimit } from '../../../shared/keys/rate-limit';
import type { LimitDecision, RateLimiter } from './limiter';
import { LocalWindowCounts } from './local-counts';

/**
 * The limiter of one process (`npm start`): the same windows as the shared one (each app's offset included), its
 * counts in memory (local-counts.ts). One process needs no shared store; several would each count on their own.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const counts = new LocalWindowCounts();
  return {
    check(appId: string, limit: RateLimit): Promise<LimitDecision> {
      return Promise.resolve(counts.admit(appId, limit, now()));
    },
  };
}
