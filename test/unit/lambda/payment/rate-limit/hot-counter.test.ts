/**
 * One app flooded from 1,000 execution environments against a store that throttles any item past 1,000 writes a
 * second, as DynamoDB does: the limiter's own code in each environment, on a simulated clock
 * (test/support/hot-counter-simulation.ts), deterministic (seeded). `npm run bench -- --only hot-counter` prints the
 * same runs' figures, min / median / max over three seeds.
 */
import {
  DYNAMODB_WRITES_PER_SECOND_PER_ITEM,
  HOT_COUNTER_RUNS,
  simulateHotCounter,
  WINDOW_FILL_RUNS,
  type HotCounterReport,
} from '../../../../support/hot-counter-simulation';

const sum = (counts: readonly number[]): number => counts.reduce((total, count) => total + count, 0);
const zeros = (counts: readonly number[]): number[] => counts.map(() => 0);

/** The flood stays in its band in every whole second after the first (which spans two of its windows). */
function outOfBand(report: HotCounterReport, perSecond: number): number[] {
  return report.acceptedPerSecond
    .slice(1)
    .filter((accepted) => accepted < 0.8 * perSecond || accepted > 1.2 * perSecond);
}

describe('an app flooded from 1,000 environments, against an item ceiling of 1,000 writes a second', () => {
  it.each(
    HOT_COUNTER_RUNS.filter((run) => run.expectation === 'within').map((run) => [run.label, run.scenario]),
  )(
    '%s: no item reaches the ceiling, nothing fails open, the flood stays in its band, the calm app is never refused',
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
      }).toEqual({ accepted: report.acceptedPerSecond, outOfBand: [] });
      expect(report.calmRequests).toBeGreaterThan(0);
      expect(report.calmRefused).toBe(0);
    },
    60_000,
  );

  it.each(
    HOT_COUNTER_RUNS.filter((run) => run.expectation === 'first-window').map((run) => [
      run.label,
      run.scenario,
    ]),
  )(
    '%s: the first window costs a write per environment; from the second on, no throttle and nothing fails open',
    async (_label, scenario) => {
      const report = await simulateHotCounter(scenario);

      // Each environment must ask once to learn the window is spent: 1,000 writes and the window's 100 on one item.
      expect(report.throttledPerSecond[0]).toBeGreaterThan(0);
      expect(report.throttledPerSecond.slice(1)).toEqual(zeros(report.throttledPerSecond.slice(1)));
      expect(report.unavailablePerSecond.slice(1)).toEqual(zeros(report.unavailablePerSecond.slice(1)));
      expect(outOfBand(report, scenario.limit.perSecond)).toEqual([]);
      expect(report.calmRefused).toBe(0);
    },
    60_000,
  );
});

describe('every window filled: an app offered far more than its limit, from 1 to 1,000 environments, 100 to 10,000 requests a second each, the store answering at once, in 2-10 ms or in 40-120 ms (each second counted holds one window)', () => {
  it.each(WINDOW_FILL_RUNS.map((run) => [run.label, run.scenario]))(
    '%s: every second after the first accepts 0.8-1.2 of the limit, none throttled or failing open, the calm app never refused',
    async (_label, scenario) => {
      const report = await simulateHotCounter(scenario);

      expect(report.floodRequests).toBeGreaterThan(
        5 * scenario.limit.perSecond * (scenario.durationMs / 1000),
      );
      expect({
        accepted: report.acceptedPerSecond,
        outOfBand: outOfBand(report, scenario.limit.perSecond),
      }).toEqual({ accepted: report.acceptedPerSecond, outOfBand: [] });
      expect(sum(report.throttledPerSecond)).toBe(0);
      expect(sum(report.unavailablePerSecond)).toBe(0);
      expect(report.calmRefused).toBe(0);
    },
    60_000,
  );
});
