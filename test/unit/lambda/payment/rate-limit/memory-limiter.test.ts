import { createMemoryRateLimiter } from '../../../../../lambda/payment/rate-limit/memory-limiter';
import { windowOffsetMs } from '../../../../../lambda/payment/rate-limit/window';

/** `ms` into the app's window `index` of length `lengthMs`. */
const into = (appId: string, lengthMs: number, index: number, ms: number): number =>
  index * lengthMs + windowOffsetMs(appId, lengthMs) + ms;

describe('createMemoryRateLimiter', () => {
  it('counts each app in its own windows, and says when to retry and what is left', async () => {
    let now = into('shop', 1_000, 1_000, 0);
    const limiter = createMemoryRateLimiter(() => now);
    const limit = { perSecond: 2, burst: 2 };

    const first = await limiter.check('shop', limit);
    const second = await limiter.check('shop', limit);
    const third = await limiter.check('shop', limit);
    const other = await limiter.check('other', limit);
    now += 500;
    const laterInTheWindow = await limiter.check('shop', limit);
    now += 500;
    const nextWindow = await limiter.check('shop', limit);

    expect(first).toEqual({ kind: 'accepted', remaining: 1, resetSeconds: 1 });
    expect(second).toEqual({ kind: 'accepted', remaining: 0, resetSeconds: 1 });
    expect(third).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(other).toMatchObject({ kind: 'accepted', remaining: 1 });
    expect(laterInTheWindow).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(nextWindow).toEqual({ kind: 'accepted', remaining: 1, resetSeconds: 1 });
  });

  it("never asks a client to retry sooner than a second, and rounds up to the app's own edge", async () => {
    let now = into('shop', 4_000, 1_000, 0);
    const limiter = createMemoryRateLimiter(() => now);
    const slow = { perSecond: 0.25, burst: 1 };

    await limiter.check('shop', slow);
    now += 1_500;

    expect(await limiter.check('shop', slow)).toEqual({ kind: 'limited', retryAfterSeconds: 3 });
  });

  it('applies a changed limit at once, raised or lowered, counting on from what the window holds', async () => {
    const now = into('shop', 1_000, 1_000, 100);
    const limiter = createMemoryRateLimiter(() => now);

    const atTwo = [
      await limiter.check('shop', { perSecond: 2, burst: 2 }),
      await limiter.check('shop', { perSecond: 2, burst: 2 }),
    ];
    const raised = await limiter.check('shop', { perSecond: 3, burst: 3 });
    const lowered = await limiter.check('shop', { perSecond: 1, burst: 1 });

    expect(atTwo.map((decision) => decision.kind)).toEqual(['accepted', 'accepted']);
    expect(raised).toMatchObject({ kind: 'accepted', remaining: 0 });
    expect(lowered.kind).toBe('limited');
  });
});
