/**
 * Hot counters (`npm run bench -- --only hot-counter`): one app flooded from 1,000 execution environments against a
 * store that throttles any item past 1,000 writes a second (DynamoDB's per-item ceiling), the limiter's own code in
 * each environment on a simulated clock (test/support/hot-counter-simulation.ts; the unit test asserts the same
 * runs). Needs no moto.
 */
import { counterStripes } from '../../lambda/payment/rate-limit/shared-limiter';
import {
  DYNAMODB_WRITES_PER_SECOND_PER_ITEM,
  HOT_COUNTER_RUNS,
  simulateHotCounter,
  type HotCounterReport,
  type HotCounterScenario,
} from '../../test/support/hot-counter-simulation';
import { fmt } from './stats';

/** The unit test's runs, longer. */
const DURATION_MS = 20_000;

const sum = (counts: readonly number[]): number => counts.reduce((total, count) => total + count, 0);

function row(label: string, scenario: HotCounterScenario, report: HotCounterReport): string {
  const afterFirst = report.acceptedPerSecond.slice(1).map((accepted) => accepted / scenario.limit.perSecond);
  const firstSecond = `${report.throttledPerSecond[0] ?? 0} / ${report.unavailablePerSecond[0] ?? 0}`;
  const later = `${sum(report.throttledPerSecond.slice(1))} / ${sum(report.unavailablePerSecond.slice(1))}`;
  return (
    `| ${label} | ${fmt(report.floodRequests / (scenario.durationMs / 1000), 0)}/s | ${report.peak.writes} | ` +
    `${fmt(sum(report.writesPerSecond.slice(-5)) / 5 / counterStripes(scenario.limit).count, 0)} | ${firstSecond} | ${later} | ` +
    `${fmt(Math.min(...afterFirst), 2)}-${fmt(Math.max(...afterFirst), 2)} | ${report.calmRefused} of ${report.calmRequests} |`
  );
}

export async function hotCounterLines(): Promise<string[]> {
  const lines = [
    `One app flooded from many environments (the limiter's own code in each, a simulated clock), a store that ` +
      `throttles any item past ${DYNAMODB_WRITES_PER_SECOND_PER_ITEM.toLocaleString('en')} writes a second, ` +
      `${DURATION_MS / 1000} s, a calm app beside it (2/s under its own 10/s). The last run is beyond the bound ` +
      `(docs/configuration.md): shown, not promised:`,
    '| run | offered | peak writes in any second on the hottest item | writes a second per item, last 5 s | first second: throttled / failed open | after it: throttled / failed open | accepted per second after the first, per limit | calm app refused |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const { label, scenario } of HOT_COUNTER_RUNS) {
    const long = { ...scenario, durationMs: DURATION_MS };
    lines.push(row(label, long, await simulateHotCounter(long)));
  }
  return lines;
}
