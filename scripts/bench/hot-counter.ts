/**
 * Hot counters (`npm run bench -- --only hot-counter`): one app flooded from 1,000 execution environments against a
 * store that throttles any item past 1,000 writes a second (DynamoDB's per-item ceiling), the limiter's own code in
 * each environment on a simulated clock (test/support/hot-counter-simulation.ts; the unit test asserts the same
 * runs). Needs no moto.
 */
import { counterShards, REQUESTS_PER_SECOND_PER_ITEM } from '../../lambda/payment/rate-limit/shared-limiter';
import {
  simulateHotCounter,
  type HotCounterReport,
  type HotCounterScenario,
} from '../../test/support/hot-counter-simulation';
import { fmt } from './stats';

const BASE: HotCounterScenario = {
  environments: 1_000,
  limit: { perSecond: 100, burst: 100 },
  perEnvironmentPerSecond: 10,
  spreadMs: 3_000,
  durationMs: 20_000,
  calm: { limit: { perSecond: 10, burst: 10 }, perSecond: 2 },
  writesPerSecondPerItem: 1_000,
  seed: 17,
};

const RUNS: readonly (readonly [string, HotCounterScenario])[] = [
  ['100/s, reaching the environments over 3 s', BASE],
  [
    `${REQUESTS_PER_SECOND_PER_ITEM}/s (the most one item counts), over 3 s`,
    { ...BASE, limit: { perSecond: REQUESTS_PER_SECOND_PER_ITEM, burst: REQUESTS_PER_SECOND_PER_ITEM } },
  ],
  ['1,000/s (five items), over 3 s', { ...BASE, limit: { perSecond: 1_000, burst: 1_000 } }],
  ['100/s, one request a second per environment, over 3 s', { ...BASE, perEnvironmentPerSecond: 1 }],
  ['100/s, reaching all 1,000 in the same instant', { ...BASE, spreadMs: 0 }],
  [
    '100/s, 2,000 environments over 6 s at 5 a second each',
    { ...BASE, environments: 2_000, spreadMs: 6_000, perEnvironmentPerSecond: 5 },
  ],
];

const sum = (counts: readonly number[]): number => counts.reduce((total, count) => total + count, 0);

function row(label: string, scenario: HotCounterScenario, report: HotCounterReport): string {
  const afterFirst = report.acceptedPerSecond.slice(1).map((accepted) => accepted / scenario.limit.perSecond);
  const firstSecond = `${report.throttledPerSecond[0] ?? 0} / ${report.unavailablePerSecond[0] ?? 0}`;
  const later = `${sum(report.throttledPerSecond.slice(1))} / ${sum(report.unavailablePerSecond.slice(1))}`;
  return (
    `| ${label} | ${fmt(report.floodRequests / (scenario.durationMs / 1000), 0)}/s | ${report.peak.writes} | ` +
    `${fmt(sum(report.writesPerSecond.slice(-5)) / 5 / counterShards(scenario.limit).count, 0)} | ${firstSecond} | ${later} | ` +
    `${fmt(Math.min(...afterFirst), 2)}-${fmt(Math.max(...afterFirst), 2)} | ${report.calmRefused} of ${report.calmRequests} |`
  );
}

export async function hotCounterLines(): Promise<string[]> {
  const lines = [
    `One app flooded from ${BASE.environments.toLocaleString('en')} environments (the limiter's own code in each, ` +
      `a simulated clock), a store that throttles any item past ${BASE.writesPerSecondPerItem.toLocaleString('en')} ` +
      `writes a second, ${BASE.durationMs / 1000} s, a calm app beside it:`,
    '| run | offered | peak writes in any second on the hottest item | writes a second per item, last 5 s | first second: throttled / failed open | after it: throttled / failed open | accepted per second after the first, per limit | calm app refused |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const [label, scenario] of RUNS) lines.push(row(label, scenario, await simulateHotCounter(scenario)));
  return lines;
}
