/**
 * The limiter under stress (`npm run bench -- --only limiter-stress`): the rate-limited payment asset `cdk synth`
 * builds, in 1 and in 4 separate processes (execution environments), with the production bounds (150 ms), against
 * moto's DynamoDB behind the fault proxy. One app floods at 10 times its limit, a calm app sends below its own.
 *
 * - Added store latency of 0, 40, 80 and 120 ms: the flooding app's accepted requests per whole second (target:
 *   0.8-1.2 of its limit), the calm app's 429s (target: none), the checks that failed open.
 * - Every write throttled, and the store black-holed, failing open and closed: each environment's store calls once
 *   its breaker is open (target: at most one a second), the slowest request, the statuses, and the requests
 *   answered without the limiter against the RateLimiterUnavailable count.
 */
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { LIMITER_WORST_ADDED_MS } from '../../lambda/payment/rate-limit/limiter';
import type { LimiterFailure } from '../../lambda/payment/rate-limit/settings';
import { BREAKER_FAILURES_TO_OPEN } from '../../lambda/payment/rate-limit/store-breaker';
import type { Fault } from '../../test/support/fault-proxy';
import type { MotoServer } from '../../test/support/moto';
import { runFlood, type FloodOptions, type FloodReport } from '../../test/support/rate-limit-scenarios';
import { synthesizeApp } from '../../test/support/synth';
import { fmt } from './stats';

/**
 * 5 a second (windows of 1 s): one environment calling a store 120 ms away can still make the window's 5 counted
 * calls and its one refused call within the window (6 x about 130 ms).
 */
const LIMIT = { perSecond: 5, burst: 5 };

const STRESS_FLOOD: Omit<FloodOptions, 'assetDir' | 'moto' | 'processes'> = {
  floodLimit: LIMIT,
  floodOffered: 10 * LIMIT.perSecond,
  steadyLimit: LIMIT,
  steadyOffered: 1,
  steadyArrivals: 'random',
  durationMs: 8_000,
  bounds: 'production',
};

const LATENCIES_MS = [0, 40, 80, 120];
const ENVIRONMENTS = [1, 4];
const OUTAGES: readonly (readonly [Fault, LimiterFailure])[] = [
  ['throttling', 'open'],
  ['throttling', 'closed'],
  ['black-holed', 'open'],
  ['black-holed', 'closed'],
];

function calmRefused(report: FloodReport): number {
  return report.steady.filter((invocation) => invocation.statusCode === 429).length;
}

function latencyRow(latencyMs: number, processes: number, report: FloodReport): string {
  const seconds = report.floodAccepted.slice(1);
  const inBand = seconds.every(
    (accepted) => accepted >= 0.8 * LIMIT.perSecond && accepted <= 1.2 * LIMIT.perSecond,
  );
  return (
    `| ${latencyMs} ms | ${processes} | ${report.floodAccepted.join(', ')} | ` +
    `${fmt(Math.min(...seconds) / LIMIT.perSecond, 2)}-${fmt(Math.max(...seconds) / LIMIT.perSecond, 2)} ` +
    `${inBand ? '(in band)' : '(OUT of band)'} | ${calmRefused(report)} of ${report.steady.length} | ` +
    `${report.unavailable.length} | ${fmt(report.dynamoDbCalls / report.requests, 3)} |`
  );
}

/**
 * The shortest time between two of an environment's calls once its breaker had opened (after the failures in a row
 * that open it), as the proxy saw them arrive, and all its calls, in ms from the start. The breaker admits a probe
 * 1,000 ms after the last at the earliest; the proxy sees each a few ms later, so a gap can read a ms or two short.
 */
function callsWhileOpen(calls: readonly number[]): { readonly shortestGap: number; readonly calls: string } {
  const afterOpening = calls.slice(BREAKER_FAILURES_TO_OPEN - 1);
  const gaps = afterOpening.slice(1).map((at, index) => at - (afterOpening[index] ?? 0));
  return { shortestGap: Math.min(...gaps), calls: calls.map((at) => fmt(at, 0)).join(' ') };
}

function outageRow(fault: Fault, failure: LimiterFailure, processes: number, report: FloodReport): string {
  const took = report.run.invocations.map((invocation) => invocation.tookMs);
  const statuses = new Map<number, number>();
  for (const { statusCode } of report.run.invocations)
    statuses.set(statusCode, (statuses.get(statusCode) ?? 0) + 1);
  const byEnvironment = report.callsByEnvironment.map(callsWhileOpen);
  return (
    `| ${fault}, ${failure} | ${processes} | ${fmt(Math.min(...byEnvironment.map((each) => each.shortestGap)), 0)} ms | ` +
    `${byEnvironment.map((each) => each.calls || '-').join(' / ')} | ${fmt(Math.max(...took))} ms | ` +
    `${[...statuses].map(([status, count]) => `${count}x${status}`).join(', ')} | ` +
    `${report.unavailable.length} / ${report.emfTotals.RateLimiterUnavailable ?? 0} |`
  );
}

/** Issue 27's flood: 4 environments as fast as they can against 10 a second, failing local. */
const FAST_LIMIT = { perSecond: 10, burst: 10 };
const FAST_ENVIRONMENTS = 4;
const FAST_RUNS = 3;
const FAST_CASES: readonly {
  readonly label: string;
  readonly options: Partial<FloodOptions>;
  readonly band: readonly [number, number];
}[] = [
  { label: '+0 ms', options: { latencyMs: 0 }, band: [8, 12] },
  { label: '+40 ms', options: { latencyMs: 40 }, band: [8, 12] },
  { label: '+80 ms', options: { latencyMs: 80 }, band: [8, 12] },
  // Past the budget on a loaded machine, and no answer at all: each environment counts the app itself.
  { label: '+120 ms', options: { latencyMs: 120 }, band: [8, 48] },
  { label: 'black-holed', options: { fault: 'black-holed' }, band: [8, 48] },
];

function spread(values: readonly number[]): string {
  const sorted = [...values].sort((first, second) => first - second);
  return `${fmt(sorted[0] ?? NaN, 0)} / ${fmt(sorted[Math.floor(sorted.length / 2)] ?? NaN, 0)} / ${fmt(sorted.at(-1) ?? NaN, 0)}`;
}

/** The machine's 1-minute load average, to print beside a figure measured on two shared cores. */
const load = (): string => fmt(loadavg()[0] ?? NaN, 1);

/**
 * One run's seconds side by side: accepted, the checks the shared count could not answer in time (each decided by
 * the environment's own count), and what those local counts accepted; with the load average before and after.
 */
function runDetail(
  label: string,
  run: number,
  report: FloodReport,
  loads: readonly [string, string],
): string {
  const after = (counts: readonly number[]): string => counts.slice(1).join(', ');
  return (
    `| ${label} | ${run + 1} | ${loads[0]} / ${loads[1]} | ${after(report.floodAccepted)} | ` +
    `${after(report.floodUnavailable)} | ${after(report.floodAcceptedLocally)} |`
  );
}

/**
 * The flooding environments' CPU niceness, BENCH_FLOOD_NICENESS (default 0: beside moto as equals, as in earlier
 * runs). Above 0, moto and the proxies come first on the two shared cores, as DynamoDB, on machines of its own, never
 * waits for a Lambda's flood; the environments still send as fast as they can with the CPU left. Measured both ways
 * (docs/configuration.md), the difference was within the run-to-run spread of a loaded machine.
 */
const FLOOD_NICENESS = Number(process.env.BENCH_FLOOD_NICENESS ?? '0');

/**
 * Issue 27's flood, 3 runs of each case. BENCH_FLOOD_CASES (labels, comma-separated: `+80 ms,black-holed`) runs
 * only those, for a look at one case.
 */
export async function limiterFloodLines(moto: MotoServer, work: string): Promise<string[]> {
  const app = await synthesizeApp(join(work, 'cdk.out-limiter-fast'), {
    appRateLimit: String(FAST_LIMIT.perSecond),
  });
  const chosen = process.env.BENCH_FLOOD_CASES?.split(',');
  const lines = [
    `${FAST_ENVIRONMENTS} environments flooding one app as fast as they can against ${FAST_LIMIT.perSecond}/s ` +
      `(burst ${FAST_LIMIT.burst}), a calm app at 1/s under its own 10/s, appRateLimitFailure=local, production ` +
      `budget (${LIMITER_WORST_ADDED_MS} ms), ${STRESS_FLOOD.durationMs / 1000} s a run, ${FAST_RUNS} runs each; accepted per whole second after the first ` +
      `(the machine's 1-minute load average, 2 cores shared, beside each case; the environments at CPU niceness ` +
      `${FLOOD_NICENESS}, moto and the proxies at 0):`,
    '| store | target | load before each run | run 1 | run 2 | run 3 | min / median / max of the run minima | min / median / max of the run maxima | every second in band | offered per second (median) | calm app 429s | RateLimiterUnavailable |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  const details = [
    '',
    'Each run second by second (after the first): the flooding app accepted, its checks the shared count could not ' +
      "answer in time (decided by the environment's own count), and of those the ones accepted:",
    '| store | run | load before / after | accepted | decided locally | accepted locally |',
    '|---|---|---|---|---|---|',
  ];
  for (const { label, options, band } of FAST_CASES) {
    if (chosen !== undefined && !chosen.includes(label)) continue;
    const reports: FloodReport[] = [];
    const loadsBefore: string[] = [];
    for (let run = 0; run < FAST_RUNS; run++) {
      const before = load();
      loadsBefore.push(before);
      const report = await runFlood({
        assetDir: app.paymentAssetDir,
        moto,
        processes: FAST_ENVIRONMENTS,
        floodLimit: FAST_LIMIT,
        floodOffered: 1_000_000,
        floodAsFastAsPossible: true,
        steadyLimit: FAST_LIMIT,
        steadyOffered: 1,
        steadyArrivals: 'random',
        durationMs: STRESS_FLOOD.durationMs,
        bounds: 'production',
        failure: 'local',
        environmentNiceness: FLOOD_NICENESS,
        ...options,
      });
      reports.push(report);
      details.push(runDetail(label, run, report, [before, load()]));
    }
    const seconds = reports.map((report) => report.floodAccepted.slice(1));
    const inBand = seconds.every((run) =>
      run.every((accepted) => accepted >= band[0] && accepted <= band[1]),
    );
    const offered = reports.flatMap((report) => report.floodOffered.slice(1));
    lines.push(
      `| ${label} | ${band[0]}-${band[1]} | ${loadsBefore.join(', ')} | ${seconds.map((run) => run.join(', ')).join(' | ')} | ` +
        `${spread(seconds.map((run) => Math.min(...run)))} | ${spread(seconds.map((run) => Math.max(...run)))} | ` +
        `${inBand ? 'yes' : 'NO'} | ${spread(offered).split(' / ')[1] ?? ''} | ` +
        `${reports.map(calmRefused).join(', ')} of ${reports.map((report) => report.steady.length).join(', ')} | ` +
        `${reports.map((report) => report.emfTotals.RateLimiterUnavailable ?? 0).join(', ')} |`,
    );
  }
  return [...lines, ...details];
}

export async function limiterStressLines(moto: MotoServer, work: string): Promise<string[]> {
  const limited = await synthesizeApp(join(work, 'cdk.out-limiter-stress'), {
    appRateLimit: String(LIMIT.perSecond),
  });
  const flood = (processes: number, extra: Partial<FloodOptions>): Promise<FloodReport> =>
    runFlood({ assetDir: limited.paymentAssetDir, moto, processes, ...STRESS_FLOOD, ...extra });

  const lines = [
    `Added store latency (fault proxy in front of moto's DynamoDB), production bounds (worst added ` +
      `${LIMITER_WORST_ADDED_MS} ms), one app offered ${STRESS_FLOOD.floodOffered}/s against ${LIMIT.perSecond}/s ` +
      `(burst ${LIMIT.burst}), a calm app at ${STRESS_FLOOD.steadyOffered}/s under its own ${LIMIT.perSecond}/s, ` +
      `${STRESS_FLOOD.durationMs / 1000} s (the first second, which holds the window before, is out of the band):`,
    '| added latency | environments | flooding app accepted per whole second | after the first, per limit (target 0.8-1.2) | calm app 429s | failed open | store calls per request |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const latencyMs of LATENCIES_MS) {
    for (const processes of ENVIRONMENTS)
      lines.push(latencyRow(latencyMs, processes, await flood(processes, { latencyMs })));
  }
  lines.push(
    '',
    `DynamoDB failing for the whole run (every write throttled, or black-holed), the same flood and calm app, ` +
      `${STRESS_FLOOD.durationMs / 1000} s, production bounds:`,
    "| fault, failure | environments | shortest gap between an environment's calls once its breaker was open (target: 1 s) | each environment's calls, ms from the start | slowest request | statuses | answered without the limiter / RateLimiterUnavailable |",
    '|---|---|---|---|---|---|---|',
  );
  for (const [fault, failure] of OUTAGES) {
    for (const processes of ENVIRONMENTS) {
      lines.push(outageRow(fault, failure, processes, await flood(processes, { fault, failure })));
    }
  }
  return lines;
}
