import { createMemoryRateLimiter } from '../../../../../lambda/payment/rate-limit/memory-limiter';

describe('createMemoryRateLimiter', () => {
  it('counts each app in its own windows, and says when to retry and what is left', async () => {
    let now = 0;
    const limiter = createMemoryRateLimiter(() => now);
    const limit = { perSecond: 2, burst: 2 };

    const first = await limiter.check('shop', limit);
    const second = await limiter.check('shop', limit);
    const third = await limiter.check('shop', limit);
    const other = await limiter.check('other', limit);
    now = 500;
    const laterInTheWindow = await limiter.check('shop', limit);
    now = 1_000;
    const nextWindow = await limiter.check('shop', limit);

    expect(first).toEqual({ kind: 'accepted', remaining: 1, resetSeconds: 1 });
    expect(second).toEqual({ kind: 'accepted', remaining: 0, resetSeconds: 1 });
    expect(third).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(other).toEqual({ kind: 'accepted', remaining: 1, resetSeconds: 1 });
    expect(laterInTheWindow).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(nextWindow).toEqual({ kind: 'accepted', remaining: 1, resetSeconds: 1 });
  });

  it('never asks a client to retry sooner than a second, and rounds up', async () => {
    let now = 0;
    const limiter = createMemoryRateLimiter(() => now);
    const slow = { perSecond: 0.25, burst: 1 };

    await limiter.check('shop', slow);
    now = 1_500;

    expect(await limiter.check('shop', slow)).toEqual({ kind: 'limited', retryAfterSeconds: 3 });
  });
});
