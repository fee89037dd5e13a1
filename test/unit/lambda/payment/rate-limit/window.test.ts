import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { appWindowAt, windowLengthMs, windowOffsetMs } from '../../../../../lambda/payment/rate-limit/window';

describe("windowOffsetMs: where an app's windows start", () => {
  it('is the first 8 bytes of SHA-256 of the app id, as a fraction of 2^64, of the window length', () => {
    const digest = createHash('sha256').update('partner-a', 'utf8').digest();
    const fraction = Number(digest.readBigUInt64BE(0)) / 2 ** 64;

    expect(windowOffsetMs('partner-a', 1_000)).toBeCloseTo(fraction * 1_000, 9);
    expect(windowOffsetMs('partner-a', 1_000)).toBe(windowOffsetMs('partner-a', 1_000));
  });

  it('spreads apps over the whole window, whatever their ids look like', () => {
    const offsets = Array.from({ length: 1_000 }, (_, index) => windowOffsetMs(`app-${index}`, 1_000));
    const tenths = Array.from(
      { length: 10 },
      (_, tenth) => offsets.filter((offset) => Math.floor(offset / 100) === tenth).length,
    );

    // 100 expected in each tenth; 60 and 140 are more than four standard deviations away.
    expect(Math.min(...tenths)).toBeGreaterThan(60);
    expect(Math.max(...tenths)).toBeLessThan(140);
  });
});

describe('appWindowAt', () => {
  it("makes windows of burst / perSecond seconds, starting at the app's offset", () => {
    const limit = { perSecond: 20, burst: 40 };
    const offset = windowOffsetMs('shop', 2_000);
    const start = 900_000_000 * 2_000 + offset;

    expect(windowLengthMs(limit)).toBe(2_000);
    expect(appWindowAt('shop', limit, start)).toEqual({
      index: 900_000_000,
      endMs: start + 2_000,
      capacity: 40,
    });
    expect(appWindowAt('shop', limit, start + 1_999.9).index).toBe(900_000_000);
    expect(appWindowAt('shop', limit, start + 2_000).index).toBe(900_000_001);
    expect(appWindowAt('shop', limit, start - 0.1).index).toBe(899_999_999);
  });

  it('admits the rate on average: burst requests every burst / perSecond seconds, in a window holding now', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.integer({ min: 1, max: 100_000 }),
        fc.double({ min: 0.001, max: 10_000, noNaN: true }),
        fc.integer({ min: 0, max: 4_000_000_000_000 }),
        (appId, burst, perSecond, now) => {
          const limit = { perSecond, burst };
          const window = appWindowAt(appId, limit, now);
          const lengthMs = windowLengthMs(limit);
          expect(window.endMs).toBeGreaterThan(now - lengthMs * 1e-9);
          expect(window.endMs - lengthMs).toBeLessThanOrEqual(now + lengthMs * 1e-9);
          expect(window.capacity / (lengthMs / 1000)).toBeCloseTo(perSecond, 6);
        },
      ),
    );
  });
});
