import fc from 'fast-check';
import { decide, type RateLimit } from '../../../../../lambda/payment/rate-limit/gcra';

/** Runs requests at the given instants through one bucket; returns which were accepted. */
function run(limit: RateLimit, instants: readonly number[]): boolean[] {
  let tat: number | undefined;
  return instants.map((now) => {
    const decision = decide(tat, now, limit);
    if (decision.accepted) tat = decision.tat;
    return decision.accepted;
  });
}

describe('decide (GCRA)', () => {
  it('accepts a full burst at once from an idle bucket, then refuses', () => {
    const accepted = run({ perSecond: 10, burst: 5 }, Array<number>(7).fill(1_000));

    expect(accepted).toEqual([true, true, true, true, true, false, false]);
  });

  it('says how many more would be accepted at once, and when the bucket is full again', () => {
    const first = decide(undefined, 0, { perSecond: 10, burst: 5 });

    expect(first).toEqual({ accepted: true, tat: 100, remaining: 4, fullInMs: 100 });
  });

  it('says when the next request would be accepted after a refusal', () => {
    const limit = { perSecond: 10, burst: 2 };
    let tat: number | undefined;
    for (const now of [0, 0]) {
      const decision = decide(tat, now, limit);
      if (decision.accepted) tat = decision.tat;
    }

    expect(decide(tat, 30, limit)).toEqual({ accepted: false, retryAfterMs: 70 });
    expect(decide(tat, 100, limit)).toMatchObject({ accepted: true });
  });

  it('accepts the steady rate and no more when flooded', () => {
    const limit = { perSecond: 100, burst: 100 };
    // 500 requests a second for 10 s, evenly spread.
    const instants = Array.from({ length: 5_000 }, (_, index) => index * 2);

    const accepted = run(limit, instants);

    const perSecond = Array.from(
      { length: 10 },
      (_, second) => accepted.slice(second * 500, (second + 1) * 500).filter(Boolean).length,
    );
    expect(perSecond[0]).toBe(199); // the full burst of 100 at once, then one every 10 ms until 990
    expect(perSecond.slice(1)).toEqual(Array<number>(9).fill(100));
  });

  it('treats a stored TAT in the past as an idle bucket', () => {
    expect(decide(500, 10_000, { perSecond: 1, burst: 3 })).toEqual({
      accepted: true,
      tat: 11_000,
      remaining: 2,
      fullInMs: 1_000,
    });
  });

  it('supports rates under one request a second', () => {
    const accepted = run({ perSecond: 0.5, burst: 1 }, [0, 1_000, 1_999, 2_000, 3_000, 4_000]);

    expect(accepted).toEqual([true, false, false, true, false, true]);
  });

  it('never accepts more than burst + rate x elapsed in any span, whatever the arrivals', () => {
    fc.assert(
      fc.property(
        fc.record({ perSecond: fc.integer({ min: 1, max: 200 }), burst: fc.integer({ min: 1, max: 50 }) }),
        fc.array(fc.integer({ min: 0, max: 5_000 }), { minLength: 1, maxLength: 300 }),
        (limit, offsets) => {
          const instants = [...offsets].sort((a, b) => a - b);
          const accepted = run(limit, instants);
          const acceptedAt = instants.filter((_, index) => accepted[index]);
          // Any window [a, b] of accepted requests holds at most burst + rate x (b - a).
          for (let i = 0; i < acceptedAt.length; i++) {
            for (let j = i; j < acceptedAt.length; j++) {
              const span = (acceptedAt[j] ?? 0) - (acceptedAt[i] ?? 0);
              if (j - i + 1 > limit.burst + (limit.perSecond * span) / 1000 + 1e-9) return false;
            }
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });
});
