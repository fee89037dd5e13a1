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
  WINDOW_FILL_RUNS,
  type HotCounterReport,
  type HotCounterScenario,
} from '../../test/support/hot-counter-simulation';
import { fmt } from './stats';

/** The unit test's runs, longer. */
const DURATION_MS = 20_000;

const sum = (counts: readonly number[]): number => counts.reduce((total, count) => total + count, 0);

/** min / median / max of three or more figures, to two places. */
function spreadOf(values: readonly number[]): string {
  const sorted = [...values].sort((first, second) => first - second);
  const at = (index: number): string => fmt(sorted[index] ?? NaN, 2);
  return `${at(0)} / ${at(Math.floor(sorted.length / 2))} / ${at(sorted.length - 1)}`;
}

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
  lines.push(
    '',
    `Every window filled: one app at 10/s offered 100 or 10,000 requests a second by each of 1 to 1,000 environments, ` +
      `${DURATION_MS / 1000} s, 3 runs (seeds) each; accepted per second after the first, per limit:`,
    '| run | min / median / max of the run minima | min / median / max of the run maxima | peak writes in any second on the item | failed open |',
    '|---|---|---|---|---|',
  );
  for (const { label, scenario } of WINDOW_FILL_RUNS) {
    const reports: HotCounterReport[] = [];
    for (const seed of [1, 2, 3]) {
      reports.push(await simulateHotCounter({ ...scenario, durationMs: DURATION_MS, seed }));
    }
    const perLimit = (pick: (ratios: number[]) => number): string =>
      spreadOf(
        reports.map((report) =>
          pick(report.acceptedPerSecond.slice(1).map((n) => n / scenario.limit.perSecond)),
        ),
      );
    lines.push(
      `| ${label} | ${perLimit((ratios) => Math.min(...ratios))} | ${perLimit((ratios) => Math.max(...ratios))} | ` +
        `${reports.map((report) => report.peak.writes).join(', ')} | ${reports.map((report) => sum(report.unavailablePerSecond)).join(', ')} |`,
    );
  }
  return lines;
}
