import fc from 'fast-check';
import {
  limitedHeaders,
  policyHeader,
  quotaPerWindow,
  rateLimitHeaders,
} from '../../../../../lambda/payment/rate-limit/headers';
import type { LimitDecision, RateLimiter } from '../../../../../lambda/payment/rate-limit/limiter';
import { createMemoryRateLimiter } from '../../../../../lambda/payment/rate-limit/memory-limiter';
import {
  REQUESTS_PER_SECOND_PER_ITEM,
  SharedRateLimiter,
} from '../../../../../lambda/payment/rate-limit/shared-limiter';
import { RATE_LIMIT_LIMITS, type RateLimit } from '../../../../../shared/keys/rate-limit';
import { CounterStoreDouble } from '../../../../support/counter-store-double';
import { expectToBe } from '../../../../support/properties/cheap-expect';

describe('the RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  it.each<[number, number, number, number]>([
    // The limit's own window, whole seconds: q at once, every w seconds, exactly as counted.
    [20, 40, 40, 2],
    [20, 20, 20, 1],
    [0.5, 1, 1, 2],
    [0.1, 3, 3, 30],
    [0.001, 1, 1, 1000],
    [0.3, 3, 3, 10],
    // A window that is not whole seconds: the burst, its window rounded up, never more than the limiter admits.
    [20, 30, 30, 2],
    [0.3, 1, 1, 4],
    [2.5, 3, 3, 2],
    [1000, 10, 10, 1],
    [Math.PI, 4, 4, 2],
  ])(
    'writes %p a second in bursts of %p as a quota of %p every %p s',
    (perSecond, burst, quota, windowSeconds) => {
      expect(quotaPerWindow({ perSecond, burst })).toEqual({ quota, windowSeconds });
    },
  );

  it('names the policy and gives q and w', () => {
    expect(policyHeader({ perSecond: 0.5, burst: 1 })).toBe('"app";q=1;w=2');
  });

  it('says what is left and within how long', () => {
    expect(rateLimitHeaders({ perSecond: 20, burst: 40 }, 39, 2)).toEqual({
      'RateLimit-Policy': '"app";q=40;w=2',
      RateLimit: '"app";r=39;t=2',
    });
  });

  it("caps r against t at the policy's rate, as the draft asks: late in a window, r is cut to q × t / w", () => {
    // 40 left with a second to go, under 40 per 2 s: at most 20 within that second.
    expect(rateLimitHeaders({ perSecond: 20, burst: 40 }, 40, 1).RateLimit).toBe('"app";r=20;t=1');
  });

  it('gives a 429 nothing left, and Retry-After at the end of the window', () => {
    expect(limitedHeaders({ perSecond: 20, burst: 40 }, 2)).toEqual({
      'Retry-After': '2',
      'RateLimit-Policy': '"app";q=40;w=2',
      RateLimit: '"app";r=0;t=2',
    });
  });
});

/**
 * The headers checked against the limiter's own decisions: a client alone on its app that does what the headers
 * say is never refused. Both limiters count in the same windows; the shared one is asked for apps on one item (above
 * REQUESTS_PER_SECOND_PER_ITEM an app is spread over items picked at random, and no header can promise what the
 * next pick will find).
 */
describe('the headers against the limiter', () => {
  interface Answer {
    readonly decision: LimitDecision;
    readonly headers: Readonly<Record<string, string>>;
  }

  type Limiters = (clock: { now: number }) => RateLimiter;
  const memory: Limiters = (clock) => createMemoryRateLimiter(() => clock.now);
  const shared: Limiters = (clock) =>
    new SharedRateLimiter({ store: new CounterStoreDouble({ now: () => clock.now }), now: () => clock.now });

  /** As the handler answers (create-handler.ts): the two fields on a 200, the three on a 429. */
  async function answer(limiter: RateLimiter, limit: RateLimit): Promise<Answer> {
    const decision = await limiter.check('partner', limit);
    switch (decision.kind) {
      case 'accepted':
        return { decision, headers: rateLimitHeaders(limit, decision.remaining, decision.resetSeconds) };
      case 'limited':
        return { decision, headers: limitedHeaders(limit, decision.retryAfterSeconds) };
      case 'unavailable':
        return { decision, headers: {} };
    }
  }

  function parameters(field: string | undefined): Readonly<Record<string, number>> {
    const entries = (field ?? '')
      .split(';')
      .slice(1)
      .map((parameter): [string, number] => {
        const [name = '', value] = parameter.split('=');
        return [name, Number(value)];
      });
    return Object.fromEntries(entries);
  }

  const anyLimit = fc.record({
    perSecond: fc.double({
      min: RATE_LIMIT_LIMITS.perSecond.min,
      max: RATE_LIMIT_LIMITS.perSecond.max,
      noNaN: true,
    }),
    burst: fc.integer({ min: RATE_LIMIT_LIMITS.burst.min, max: RATE_LIMIT_LIMITS.burst.max }),
  });
  const oneItemLimit = fc.record({
    perSecond: fc.double({
      min: RATE_LIMIT_LIMITS.perSecond.min,
      max: REQUESTS_PER_SECOND_PER_ITEM,
      noNaN: true,
    }),
    burst: fc.integer({ min: 1, max: 2_000 }),
  });
  const start = fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 });
  /** Gaps between a client's attempts, in ms: bunched, spread, and now and then long. */
  const gaps = fc.array(
    fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 20_000 })),
    {
      minLength: 1,
      maxLength: 60,
    },
  );

  describe.each([
    ['the in-memory limiter (npm start)', memory, anyLimit],
    ['the shared limiter (the Lambda)', shared, oneItemLimit],
  ] as const)('%s', (_name, limiterOf, limits) => {
    it('never refuses a client that sends no more than q in any w seconds (RateLimit-Policy)', async () => {
      await fc.assert(
        fc.asyncProperty(limits, start, gaps, async (limit, startAt, attempts) => {
          const clock = { now: startAt };
          const limiter = limiterOf(clock);
          const { q, w } = parameters(policyHeader(limit));
          const windowMs = (w ?? 1) * 1000;
          const sent: number[] = [];
          for (const gap of attempts) {
            clock.now += gap;
            // The client keeps to the policy: it skips an attempt that would make q + 1 within w seconds.
            if (sent.filter((at) => at > clock.now - windowMs).length >= (q ?? 1)) continue;
            sent.push(clock.now);
            expectToBe((await answer(limiter, limit)).decision.kind, 'accepted');
          }
        }),
        { numRuns: 200 },
      );
    });

    it('never refuses a client that sends no more than r in the next t seconds (RateLimit), nor one that waits Retry-After', async () => {
      await fc.assert(
        fc.asyncProperty(
          limits,
          start,
          gaps,
          fc.array(fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), { maxLength: 50 }),
          async (limit, startAt, before, within) => {
            const clock = { now: startAt };
            const limiter = limiterOf(clock);
            // Any history first, then the promise of the last answer is put to the test.
            let last = await answer(limiter, limit);
            for (const gap of before) {
              clock.now += gap;
              last = await answer(limiter, limit);
            }
            const { r, t } = parameters(last.headers.RateLimit);
            const { q, w } = parameters(last.headers['RateLimit-Policy']);
            expect(t).toBeGreaterThanOrEqual(1);
            // The draft's cap of r against t: never a faster rate than the policy's.
            expect((r ?? 0) * (w ?? 1)).toBeLessThanOrEqual((q ?? 0) * (t ?? 0));
            if (last.decision.kind === 'limited') {
              expect(r).toBe(0);
              expect(Number(last.headers['Retry-After'])).toBe(t);
              clock.now += (t ?? 0) * 1000;
              expectToBe((await answer(limiter, limit)).decision.kind, 'accepted');
              return;
            }
            const answeredAt = clock.now;
            const times = within
              .slice(0, r)
              .map((fraction) => answeredAt + fraction * (t ?? 0) * 1000)
              .sort((a, b) => a - b);
            for (const at of times) {
              clock.now = at;
              expectToBe((await answer(limiter, limit)).decision.kind, 'accepted');
            }
          },
        ),
        { numRuns: 200 },
      );
    });
  });
});
