/**
 * The shared limiter's rules against an in-memory counter store: what it asks the store, when it does not, and
 * what each answer of the store means for the request. Nothing here knows DynamoDB, so these hold for any store
 * behind the seam (lambda/payment/rate-limit/counter-store.ts).
 */
import type { IncrementOutcome } from '../../../../../lambda/payment/rate-limit/counter-store';
import { LIMITER_WORST_ADDED_MS } from '../../../../../lambda/payment/rate-limit/limiter';
import {
  counterStripes,
  REQUESTS_PER_SECOND_PER_ITEM,
  SharedRateLimiter,
} from '../../../../../lambda/payment/rate-limit/shared-limiter';
import {
  BREAKER_FAILURES_TO_OPEN,
  BREAKER_PROBE_INTERVAL_MS,
} from '../../../../../lambda/payment/rate-limit/store-breaker';
import { appWindowAt, windowLengthMs, windowOffsetMs } from '../../../../../lambda/payment/rate-limit/window';
import type { RateLimit } from '../../../../../shared/keys/rate-limit';
import { CounterStoreDouble } from '../../../../support/counter-store-double';

/** 10 requests a second in bursts of 5: windows of 500 ms, 5 requests each. */
const LIMIT: RateLimit = { perSecond: 10, burst: 5 };
const WINDOW = 3_600_000_000;

/** `ms` into window `index` of `appId` under `limit`. */
function into(appId: string, limit: RateLimit, index: number, ms: number): number {
  const length = windowLengthMs(limit);
  return index * length + windowOffsetMs(appId, length) + ms;
}

const TIMEOUT: IncrementOutcome = {
  kind: 'failed',
  landed: 'maybe',
  error: 'TimeoutError: no answer within 140 ms',
};
const REFUSED: IncrementOutcome = { kind: 'unsent', error: 'Error: connect ECONNREFUSED 127.0.0.1:1' };
const THROTTLED: IncrementOutcome = {
  kind: 'throttled',
  error: 'ProvisionedThroughputExceededException: Throughput exceeds the current capacity',
};

/** What this environment's own count says of the first request of the app in its window (5 a window). */
const FIRST_LOCAL = { kind: 'accepted', remaining: 4, resetSeconds: 1 } as const;

function environment(store: CounterStoreDouble, clock: { now: number }, random = (): number => 0) {
  return new SharedRateLimiter({ store, now: () => clock.now, random });
}

describe('SharedRateLimiter', () => {
  let clock: { now: number };
  let store: CounterStoreDouble;
  let limiter: SharedRateLimiter;

  beforeEach(() => {
    clock = { now: into('shop', LIMIT, WINDOW, 200) };
    store = new CounterStoreDouble({ now: () => clock.now });
    limiter = environment(store, clock);
  });

  it("counts a request in the app's item for its window, under its capacity, with its TTL, and says what is left", async () => {
    const decision = await limiter.check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'accepted', remaining: 4, resetSeconds: 1 });
    expect(store.calls).toHaveLength(1);
    const { request } = store.calls[0] ?? {};
    expect(request).toEqual({
      key: `shop#${WINDOW}`,
      capacity: 5,
      // The window's end, in seconds, plus 10 minutes.
      expiresAtSeconds: Math.ceil(appWindowAt('shop', LIMIT, clock.now).endMs / 1000) + 600,
      signal: expect.any(AbortSignal) as unknown,
    });
  });

  it("refuses once the window is full, then the rest of that window without a call; asks again in the app's next window, in that window's item", async () => {
    for (let i = 0; i < 5; i++) await limiter.check('shop', LIMIT);
    const callsWhenSpent = store.calls.length;

    const refused = [await limiter.check('shop', LIMIT), await limiter.check('shop', LIMIT)];
    const callsWhenRefused = store.calls.length;
    clock.now = into('shop', LIMIT, WINDOW + 1, 10);
    const nextWindow = await limiter.check('shop', LIMIT);

    expect(refused).toEqual([
      { kind: 'limited', retryAfterSeconds: 1 },
      { kind: 'limited', retryAfterSeconds: 1 },
    ]);
    // The fifth took the last request and said so: no refused write was needed to learn it.
    expect(callsWhenRefused).toBe(callsWhenSpent);
    expect(nextWindow).toEqual({ kind: 'accepted', remaining: 4, resetSeconds: 1 });
    expect(store.calls.at(-1)?.request.key).toBe(`shop#${WINDOW + 1}`);
  });

  it('learns a window another environment filled from one refused write, and makes no other', async () => {
    const other = environment(store, clock);
    for (let i = 0; i < 5; i++) await other.check('shop', LIMIT);

    const decisions = [await limiter.check('shop', LIMIT), await limiter.check('shop', LIMIT)];

    expect(decisions.map((decision) => decision.kind)).toEqual(['limited', 'limited']);
    expect(store.calls.map((call) => call.outcome.kind)).toEqual([
      'counted',
      'counted',
      'counted',
      'counted',
      'counted',
      'full',
    ]);
  });

  it('keeps what it knows of one app apart from another', async () => {
    for (let i = 0; i < 6; i++) await limiter.check('shop', LIMIT);

    expect(await limiter.check('other', LIMIT)).toMatchObject({ kind: 'accepted' });
  });

  it("says when to retry in whole seconds, rounded up, at the end of the app's own window", async () => {
    // One request every 4 s: windows of 4 s; 1.5 s into one, 2.5 s are left.
    const slow = { perSecond: 0.25, burst: 1 };
    clock.now = into('shop', slow, 450_000_000, 1_500);
    await limiter.check('shop', slow);

    expect(await limiter.check('shop', slow)).toEqual({ kind: 'limited', retryAfterSeconds: 3 });
  });

  describe('counted once', () => {
    it('never sends again a write that may have landed: the request is answered as the store unavailable', async () => {
      store.answer(TIMEOUT);

      const decision = await limiter.check('shop', LIMIT);

      expect(decision).toEqual({ kind: 'unavailable', error: TIMEOUT.error, local: FIRST_LOCAL });
      expect(store.calls).toHaveLength(1);
    });

    it('sends once more a write that never reached the store, within the budget', async () => {
      store.answer(REFUSED);

      const decision = await limiter.check('shop', LIMIT);

      expect(decision).toMatchObject({ kind: 'accepted', remaining: 4 });
      expect(store.calls.map((call) => call.outcome.kind)).toEqual(['unsent', 'counted']);
    });

    it('does not send it again when the budget no longer holds a whole attempt', async () => {
      store.answer(REFUSED, REFUSED);
      const slowStore = {
        increment: async (request: Parameters<CounterStoreDouble['increment']>[0]) => {
          clock.now += 130;
          return store.increment(request);
        },
      };
      const late = new SharedRateLimiter({ store: slowStore, now: () => clock.now, random: () => 0 });

      const decision = await late.check('shop', LIMIT);

      expect(decision).toEqual({ kind: 'unavailable', error: REFUSED.error, local: FIRST_LOCAL });
      expect(store.calls).toHaveLength(1);
    });
  });

  it('answers within its budget, whatever the store does: the one signal it passes down ends the call', async () => {
    store.answer('hang');
    const bounded = new SharedRateLimiter({ store, budgetMs: 20 });
    const started = performance.now();

    await expect(bounded.check('shop', LIMIT)).resolves.toEqual({
      kind: 'unavailable',
      error: 'TimeoutError: time budget ran out after sending',
      local: { kind: 'accepted', remaining: 4, resetSeconds: expect.any(Number) as unknown },
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(store.calls).toHaveLength(1);
  });

  it(`gives the check ${LIMITER_WORST_ADDED_MS} ms unless told otherwise`, async () => {
    store.answer('hang');
    const production = new SharedRateLimiter({ store });
    const started = performance.now();

    await production.check('shop', LIMIT);

    expect(performance.now() - started).toBeGreaterThanOrEqual(LIMITER_WORST_ADDED_MS - 5);
  });

  describe('a throttled counter', () => {
    it('is limited when this environment saw its window full: the item is busy with its own flood', async () => {
      const other = environment(store, clock);
      for (let i = 0; i < 5; i++) await other.check('shop', LIMIT);
      await limiter.check('shop', LIMIT);
      clock.now = into('shop', LIMIT, WINDOW + 1, 10);
      store.answer(THROTTLED);

      const decision = await limiter.check('shop', LIMIT);

      expect(decision).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
      expect(limiter.breaker.isOpen()).toBe(false);
    });

    it('is the store failing when nothing here explains it, for that item until its window ends, and never a 429', async () => {
      store.answer(THROTTLED);

      const decisions = [await limiter.check('shop', LIMIT), await limiter.check('shop', LIMIT)];

      expect(decisions).toEqual([
        { kind: 'unavailable', error: THROTTLED.error, local: FIRST_LOCAL },
        {
          kind: 'unavailable',
          error: `${THROTTLED.error} (earlier in this window; not asked again until it ends)`,
          local: { ...FIRST_LOCAL, remaining: 3 },
        },
      ]);
      expect(store.calls).toHaveLength(1);
    });

    it("never refuses a calm app beside another app's hot item, nor opens the breaker for it", async () => {
      // An item takes 6 writes a second here: the flood's 5 counted and one refused, then it is throttled.
      const hot = new CounterStoreDouble({ now: () => clock.now, writesPerSecondPerItem: 6 });
      const [first, second, here] = [0, 1, 2].map(() => environment(hot, clock)) as [
        SharedRateLimiter,
        SharedRateLimiter,
        SharedRateLimiter,
      ];
      for (let i = 0; i < 5; i++) await first.check('flood', LIMIT);
      await second.check('flood', LIMIT);

      const flood = await here.check('flood', LIMIT);
      const calm = [await here.check('calm', LIMIT), await here.check('calm', LIMIT)];

      expect(hot.calls.map((call) => call.outcome.kind)).toEqual([
        ...Array.from({ length: 5 }, () => 'counted'),
        'full',
        'throttled',
        'counted',
        'counted',
      ]);
      expect(flood.kind).toBe('unavailable');
      expect(calm.map((decision) => decision.kind)).toEqual(['accepted', 'accepted']);
      expect(here.breaker.isOpen()).toBe(false);
    });
  });

  describe("this environment's own count, for appRateLimitFailure=local", () => {
    it('admits the burst in a window when the store cannot answer, then refuses until the window ends', async () => {
      store.answer(...Array.from({ length: 7 }, () => TIMEOUT));

      const decisions = [];
      for (let i = 0; i < 7; i++) decisions.push(await limiter.check('shop', LIMIT));

      expect(decisions.map((decision) => decision.kind === 'unavailable' && decision.local?.kind)).toEqual([
        'accepted',
        'accepted',
        'accepted',
        'accepted',
        'accepted',
        'limited',
        'limited',
      ]);
      expect(decisions.at(-1)).toMatchObject({ local: { kind: 'limited', retryAfterSeconds: 1 } });
      clock.now = into('shop', LIMIT, WINDOW + 1, 10);
      store.answer(TIMEOUT);
      expect(await limiter.check('shop', LIMIT)).toMatchObject({ local: { kind: 'accepted', remaining: 4 } });
    });

    it('counts the requests the store accepted in the window, so the two together stay within the burst', async () => {
      for (let i = 0; i < 3; i++) await limiter.check('shop', LIMIT);
      store.answer(TIMEOUT, TIMEOUT, TIMEOUT);

      const local = [];
      for (let i = 0; i < 3; i++) {
        const decision = await limiter.check('shop', LIMIT);
        local.push(decision.kind === 'unavailable' ? decision.local?.kind : decision.kind);
      }

      expect(local).toEqual(['accepted', 'accepted', 'limited']);
    });

    it('counts at least what the shared count last said the window holds: a time-out late in a window admits only what was left', async () => {
      const other = environment(store, clock);
      for (let i = 0; i < 3; i++) await other.check('shop', LIMIT);
      await limiter.check('shop', LIMIT);
      store.answer(TIMEOUT, TIMEOUT);

      const late = [await limiter.check('shop', LIMIT), await limiter.check('shop', LIMIT)];

      // The window held 4 of 5 when this environment last asked: one more, not four.
      expect(late.map((decision) => decision.kind === 'unavailable' && decision.local?.kind)).toEqual([
        'accepted',
        'limited',
      ]);
    });

    it('failing local, never accepts more than the burst from one environment in a window: once its own count admitted the rest while the store was slow, the window is spent here, without a call', async () => {
      limiter = new SharedRateLimiter({ store, now: () => clock.now, random: () => 0, failure: 'local' });
      // Slow now and then (never three in a row, so the breaker stays closed): four accepted by its own count, one
      // by the store's, whose item the time-outs never reached.
      store.answer(TIMEOUT, TIMEOUT, { kind: 'counted', used: 1 }, TIMEOUT, TIMEOUT);
      const accepted = [];
      for (let i = 0; i < 5; i++) {
        const decision = await limiter.check('shop', LIMIT);
        accepted.push(decision.kind === 'unavailable' ? decision.local?.kind : decision.kind);
      }
      const after = await limiter.check('shop', LIMIT);

      expect(accepted).toEqual(Array.from({ length: 5 }, () => 'accepted'));
      expect(after).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
      // Refused without a call: the store's item keeps its room for the other environments.
      expect(store.calls).toHaveLength(5);
      // The next window starts afresh, through the store.
      clock.now = into('shop', LIMIT, WINDOW + 1, 10);
      expect(await limiter.check('shop', LIMIT)).toMatchObject({ kind: 'accepted', remaining: 4 });
    });

    it.each(['open', 'closed'] as const)(
      'failing %s, the local decisions are not acceptances: a store unavailable all window long never turns into a refusal',
      async (failure) => {
        limiter = new SharedRateLimiter({ store, now: () => clock.now, random: () => 0, failure });
        // The item throttled with nothing to explain it: not asked again this window, and the breaker stays closed.
        store.answer(THROTTLED);

        const decisions = [];
        for (let i = 0; i < 2 * LIMIT.burst; i++) decisions.push(await limiter.check('shop', LIMIT));

        expect(limiter.breaker.isOpen()).toBe(false);
        expect(decisions.map((decision) => decision.kind)).toEqual(decisions.map(() => 'unavailable'));
      },
    );

    it('never refuses a calm app while the breaker is open: its own count is below its limit', async () => {
      store.answer(TIMEOUT, TIMEOUT, TIMEOUT, TIMEOUT);
      for (let i = 0; i < 3; i++) await limiter.check(`app-${i}`, LIMIT);
      expect(limiter.breaker.isOpen()).toBe(true);

      const calm = [];
      for (let window = 1; window <= 3; window++) {
        clock.now = into('calm', LIMIT, WINDOW + window, 100);
        calm.push(await limiter.check('calm', LIMIT), await limiter.check('calm', LIMIT));
      }

      // Within a second the breaker lets a probe through (the store answers it, and closes the breaker).
      expect(
        calm.map((decision) => (decision.kind === 'unavailable' ? decision.local?.kind : decision.kind)),
      ).toEqual(Array.from({ length: 6 }, () => 'accepted'));
      expect(calm.some((decision) => decision.kind === 'unavailable')).toBe(true);
    });
  });

  describe('the breaker', () => {
    it(`opens after ${BREAKER_FAILURES_TO_OPEN} failed calls in a row; then no call, and every request is unavailable`, async () => {
      store.answer(TIMEOUT, { kind: 'counted', used: 1 }, TIMEOUT, TIMEOUT, TIMEOUT);

      const decisions = [];
      for (let i = 0; i < 7; i++) decisions.push(await limiter.check(`app-${i}`, LIMIT));

      expect(store.calls).toHaveLength(5);
      expect(decisions.map((decision) => decision.kind)).toEqual([
        'unavailable',
        'accepted',
        'unavailable',
        'unavailable',
        'unavailable',
        'unavailable',
        'unavailable',
      ]);
      expect(decisions[5]).toEqual({
        kind: 'unavailable',
        error: `rate limit store not called: the breaker is open (${TIMEOUT.error}); next probe in ${BREAKER_PROBE_INTERVAL_MS} ms`,
        local: FIRST_LOCAL,
      });
    });

    it('lets one probe through a second, alone, and closes when it succeeds', async () => {
      store.answer(TIMEOUT, TIMEOUT, TIMEOUT);
      await limiter.check('a', LIMIT);
      await limiter.check('b', LIMIT);
      await limiter.check('c', LIMIT);
      const opened = clock.now;
      const callsAt = (): number[] => store.calls.map((call) => call.at - opened);

      // A request every 100 ms for 2.5 s; the store fails the first probe and answers the second.
      store.answer(REFUSED);
      for (let at = 100; at <= 2_500; at += 100) {
        clock.now = opened + at;
        await limiter.check(`app-${at}`, LIMIT);
      }

      // Three calls before it opened; then one probe at 1 s (refused: not sent again while probing), one at 2 s
      // that is answered, and every request calls again once it closed.
      expect(callsAt()).toEqual([0, 0, 0, 1_000, 2_000, 2_100, 2_200, 2_300, 2_400, 2_500]);
      expect(limiter.breaker.isOpen()).toBe(false);
    });
  });

  describe('shares', () => {
    it(`spreads an app over several items above ${REQUESTS_PER_SECOND_PER_ITEM} requests a second, each with its share`, async () => {
      const busy = { perSecond: 500, burst: 501 };
      const spread = environment(store, clock, () => 0.5);

      const decision = await spread.check('busy', busy);

      expect(counterStripes(busy)).toEqual({ count: 3, capacities: [167, 167, 167] });
      expect(store.calls[0]?.request.key).toMatch(/^busy#1#\d+$/);
      expect(store.calls[0]?.request.capacity).toBe(167);
      expect(decision).toMatchObject({ kind: 'accepted', remaining: 166 * 3 });
    });
  });
});

describe('counterStripes', () => {
  it(`keeps an app on one item up to ${REQUESTS_PER_SECOND_PER_ITEM} a second, and never makes a share of nothing`, () => {
    expect(counterStripes({ perSecond: 200, burst: 200 })).toEqual({ count: 1, capacities: [200] });
    expect(counterStripes({ perSecond: 201, burst: 201 }).count).toBe(2);
    expect(counterStripes({ perSecond: 10_000, burst: 10_000 }).count).toBe(50);
    expect(counterStripes({ perSecond: 10_000, burst: 3 })).toEqual({ count: 3, capacities: [1, 1, 1] });
  });
});
