/**
 * One app flooded from 1,000 execution environments against a store that throttles any item past 1,000 writes a
 * second, as DynamoDB does: the limiter's own code in each environment, on a simulated clock
 * (test/support/hot-counter-simulation.ts). `npm run bench -- --only hot-counter` prints the same runs' figures.
 */
import { REQUESTS_PER_SECOND_PER_ITEM } from '../../../../../lambda/payment/rate-limit/shared-limiter';
import {
  simulateHotCounter,
  type HotCounterReport,
  type HotCounterScenario,
} from '../../../../support/hot-counter-simulation';

const DYNAMODB_WRITES_PER_SECOND_PER_ITEM = 1_000;

const FLOOD: HotCounterScenario = {
  environments: 1_000,
  limit: { perSecond: 100, burst: 100 },
  // 10,000 requests a second in all: 100 times the limit.
  perEnvironmentPerSecond: 10,
  spreadMs: 3_000,
  durationMs: 12_000,
  calm: { limit: { perSecond: 10, burst: 10 }, perSecond: 2 },
  writesPerSecondPerItem: DYNAMODB_WRITES_PER_SECOND_PER_ITEM,
  seed: 17,
};

const sum = (counts: readonly number[]): number => counts.reduce((total, count) => total + count, 0);

/** The flood stays in its band in every whole second after the first (which spans two of its windows). */
function outOfBand(report: HotCounterReport, perSecond: number): number[] {
  return report.acceptedPerSecond
    .slice(1)
    .filter((accepted) => accepted < 0.8 * perSecond || accepted > 1.2 * perSecond);
}

describe('an app flooded from 1,000 environments, against an item ceiling of 1,000 writes a second', () => {
  it.each([
    ['100/s (one item)', FLOOD],
    [
      `${REQUESTS_PER_SECOND_PER_ITEM}/s, the most one item counts`,
      { ...FLOOD, limit: { perSecond: REQUESTS_PER_SECOND_PER_ITEM, burst: REQUESTS_PER_SECOND_PER_ITEM } },
    ],
    ['1,000/s (five items)', { ...FLOOD, limit: { perSecond: 1_000, burst: 1_000 } }],
    ['100/s, one request a second per environment', { ...FLOOD, perEnvironmentPerSecond: 1 }],
  ])(
    'reaching them over 3 s, at %s: no item reaches the ceiling, nothing fails open, the flood stays in its band, the calm app is never refused',
    async (_label, scenario) => {
      const report = await simulateHotCounter(scenario);

      expect(report.floodRequests).toBeGreaterThan(
        5 * scenario.limit.perSecond * (scenario.durationMs / 1000),
      );
      expect(sum(report.throttledPerSecond)).toBe(0);
      expect(report.peak.writes).toBeLessThan(DYNAMODB_WRITES_PER_SECOND_PER_ITEM);
      expect(sum(report.unavailablePerSecond)).toBe(0);
      expect({
        accepted: report.acceptedPerSecond,
        outOfBand: outOfBand(report, scenario.limit.perSecond),
      }).toEqual({
        accepted: report.acceptedPerSecond,
        outOfBand: [],
      });
      expect(report.calmRequests).toBeGreaterThan(0);
      expect(report.calmRefused).toBe(0);
    },
    60_000,
  );

  it('reaching all 1,000 in the same instant: the first window costs a write per environment; from the second on, no throttle and nothing fails open', async () => {
    const report = await simulateHotCounter({ ...FLOOD, spreadMs: 0 });

    // Each environment must ask once to learn the window is spent: 1,000 writes and the window's 100 on one item.
    expect(report.throttledPerSecond[0]).toBeGreaterThan(0);
    expect(report.throttledPerSecond.slice(1)).toEqual(report.throttledPerSecond.slice(1).map(() => 0));
    expect(report.unavailablePerSecond.slice(1)).toEqual(report.unavailablePerSecond.slice(1).map(() => 0));
    expect(outOfBand(report, FLOOD.limit.perSecond)).toEqual([]);
    expect(report.calmRefused).toBe(0);
  }, 60_000);
});
