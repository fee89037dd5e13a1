import fc from 'fast-check';
import { windowAt, windowLengthMs } from '../../../../../lambda/payment/rate-limit/window';

describe('windowAt', () => {
  it('makes windows of burst / perSecond seconds, aligned on the epoch', () => {
    const limit = { perSecond: 20, burst: 40 };

    expect(windowLengthMs(limit)).toBe(2_000);
    expect(windowAt(limit, 1_800_000_000_000)).toEqual({
      index: 900_000_000,
      endMs: 1_800_000_002_000,
      capacity: 40,
    });
    expect(windowAt(limit, 1_800_000_001_999).index).toBe(900_000_000);
    expect(windowAt(limit, 1_800_000_002_000).index).toBe(900_000_001);
  });

  it('admits the rate on average: burst requests every burst / perSecond seconds', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0.001, max: 10_000, noNaN: true }),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        (burst, perSecond, now) => {
          const limit = { perSecond, burst };
          const window = windowAt(limit, now);
          const lengthMs = windowLengthMs(limit);
          // The window holds `now`, and its capacity over its length is the rate.
          expect(window.endMs).toBeGreaterThan(now);
          expect(window.endMs - lengthMs).toBeLessThanOrEqual(now + lengthMs * 1e-9);
          expect(window.capacity / (lengthMs / 1000)).toBeCloseTo(perSecond, 6);
        },
      ),
    );
  });
});
