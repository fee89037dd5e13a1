import { decide, type RateLimit } from './gcra';
import { wholeSeconds, type LimitDecision, type RateLimiter } from './limiter';

/**
 * The limiter of one process (`npm start`): the same algorithm as the shared one, its state in a map. One process
 * needs no shared store; several would each count on their own.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const tats = new Map<string, number>();
  return {
    check(appId: string, limit: RateLimit): Promise<LimitDecision> {
      const decision = decide(tats.get(appId), now(), limit);
      if (!decision.accepted) {
        return Promise.resolve({ kind: 'limited', retryAfterSeconds: wholeSeconds(decision.retryAfterMs) });
      }
      tats.set(appId, decision.tat);
      return Promise.resolve({
        kind: 'accepted',
        remaining: decision.remaining,
        resetSeconds: wholeSeconds(decision.fullInMs),
      });
    },
  };
}
