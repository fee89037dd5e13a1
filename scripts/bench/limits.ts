/**
 * Per-app rate limits: the limiter's added latency, its DynamoDB calls per request, and the bundle with and without
 * it, measured on the payment assets `cdk synth` builds, each execution environment a Node process serving one
 * request at a time, against moto.
 */
import { join } from 'node:path';
import { LIMITER_WORST_ADDED_MS } from '../../lambda/payment/rate-limit/limiter';
import { REQUESTS_PER_SECOND_PER_ITEM } from '../../lambda/payment/rate-limit/shared-limiter';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { runFleet, type Invocation } from '../../test/support/asset-fleet';
import { readEmfLines, totalCounts } from '../../test/support/emf';
import { FAULTS, startFaultProxy, type Fault } from '../../test/support/fault-proxy';
import { DEMO_KEY } from '../../test/support/keys';
import { createMotoRateLimitTable, createMotoSecret, type MotoServer } from '../../test/support/moto';
import {
  limitedAssetEnv,
  requestOf,
  runFlood,
  STANDARD_FLOOD,
} from '../../test/support/rate-limit-scenarios';
import { synthesizeApp } from '../../test/support/synth';
import { sizes } from './bundles';
import { fmt, median, percentile } from './stats';

/** Requests per latency run, one at a time. */
const LATENCY_REQUESTS = 300;
/** Requests per fault, one at a time: each black-holed one waits out the whole bound. */
const FAULT_REQUESTS = 20;

/** Half the steady app's limit, from every environment: one write per request, whoever writes. */
const SHARED_APP_OFFERED = STANDARD_FLOOD.steadyLimit.perSecond / 2;

/** Never reached by requests one at a time: every request is checked, and accepted. */
const UNREACHED_LIMIT: RateLimit = { perSecond: 10_000, burst: 10_000 };
/** Reached at the second request: every later one is refused. */
const EXCEEDED_LIMIT: RateLimit = { perSecond: 1, burst: 1 };

interface LatencyRun {
  readonly invocations: readonly Invocation[];
  /** UpdateItem calls counted by the proxy the run's DynamoDB calls went through (0 without one). */
  readonly calls: number;
  /** Checks that failed open (RateLimiterUnavailable): their latency is the bound's, not moto's. */
  readonly unavailable: number;
}

/** One process, `LATENCY_REQUESTS` requests of demo one at a time, after one to warm up. */
async function latencyRun(
  assetDir: string,
  env: Record<string, string>,
  countCalls?: () => number,
  options: { readonly requests?: number; readonly beforeStart?: () => Promise<void> } = {},
): Promise<LatencyRun> {
  let startedCalls = 0;
  const run = await runFleet({
    assetDir,
    env,
    processes: [{}],
    warmUp: [requestOf('demo', DEMO_KEY)],
    beforeStart: async () => {
      startedCalls = countCalls?.() ?? 0;
      await options.beforeStart?.();
    },
    workload: {
      kind: 'sequence',
      events: Array.from({ length: options.requests ?? LATENCY_REQUESTS }, () => requestOf('demo', DEMO_KEY)),
    },
  });
  const totals = totalCounts(readEmfLines(run.outputs.join('\n')).lines);
  return {
    invocations: run.invocations,
    calls: (countCalls?.() ?? 0) - startedCalls,
    unavailable: totals.RateLimiterUnavailable ?? 0,
  };
}

const tookMs = (run: LatencyRun): number[] => run.invocations.map((invocation) => invocation.tookMs);

function latencyRow(label: string, run: LatencyRun, baseline: LatencyRun): string {
  const took = tookMs(run);
  const base = tookMs(baseline);
  const statuses = [...new Set(run.invocations.map((invocation) => invocation.statusCode))].join('/');
  return (
    `| ${label} | ${fmt(median(took))} ms | ${fmt(percentile(took, 99))} ms | ` +
    `${fmt(median(took) - median(base))} ms | ${fmt(percentile(took, 99) - percentile(base, 99))} ms | ` +
    `${statuses} | ${run.unavailable} |`
  );
}

async function faultRow(
  moto: MotoServer,
  fault: Fault,
  assetDir: string,
  env: (dynamoDbEndpoint: string) => Record<string, string>,
  plain: LatencyRun,
): Promise<string> {
  const proxy = await startFaultProxy(moto.port);
  try {
    const run = await latencyRun(assetDir, env(proxy.endpoint), undefined, {
      requests: FAULT_REQUESTS,
      beforeStart: () => proxy.setMode(fault),
    });
    const took = tookMs(run);
    const statuses = [...new Set(run.invocations.map((invocation) => invocation.statusCode))].join('/');
    return (
      `| ${fault} | ${fmt(median(took))} ms | ${fmt(Math.max(...took))} ms | ` +
      `${fmt(Math.max(...took) - Math.max(...tookMs(plain)))} ms | ${statuses} | ${run.unavailable} |`
    );
  } finally {
    await proxy.close();
  }
}

export async function limitLines(moto: MotoServer, work: string, plainAssetDir: string): Promise<string[]> {
  const limited = await synthesizeApp(join(work, 'cdk.out-limits'), { appRateLimit: '20' });
  const secretArn = await createMotoSecret(moto, 'bench/limited-keys', JSON.stringify({ demo: DEMO_KEY }));
  const lines = [
    '| bundle | size |',
    '|---|---|',
    `| payment Lambda without limits (lambda/payment/index.ts) | ${sizes(join(plainAssetDir, 'index.js'))} |`,
    `| payment Lambda with appRateLimit (lambda/payment/rate-limited.ts) | ${sizes(join(limited.paymentAssetDir, 'index.js'))} |`,
    '',
  ];

  // Latency: production bounds, DynamoDB direct (a proxy would add its own hop).
  const tableFor = async (name: string): Promise<string> => {
    await createMotoRateLimitTable(moto, name);
    return name;
  };
  const envFor = (tableName: string, defaultLimit: RateLimit, dynamoDbEndpoint?: string) =>
    limitedAssetEnv({
      moto,
      secretArn,
      tableName,
      defaultLimit,
      ...(dynamoDbEndpoint === undefined ? {} : { dynamoDbEndpoint }),
    });
  const plain = await latencyRun(plainAssetDir, {
    ...moto.awsEnv,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    KEYS_SECRET_ID: secretArn,
  });
  const under = await latencyRun(
    limited.paymentAssetDir,
    envFor(await tableFor('bench-latency-under'), UNREACHED_LIMIT),
  );
  const over = await latencyRun(
    limited.paymentAssetDir,
    envFor(await tableFor('bench-latency-over'), EXCEEDED_LIMIT),
  );
  lines.push(
    `The limiter's added latency: ${LATENCY_REQUESTS} requests one at a time in one process, handler time, ` +
      `production bounds (worst added ${LIMITER_WORST_ADDED_MS} ms), against moto:`,
    '| run | median | p99 | added, median | added, p99 | statuses | failed open |',
    '|---|---|---|---|---|---|---|',
    `| without limits | ${fmt(median(tookMs(plain)))} ms | ${fmt(percentile(tookMs(plain), 99))} ms | - | - | 200 | - |`,
    latencyRow('with limits, under the limit', under, plain),
    latencyRow('with limits, over the limit', over, plain),
    '',
  );

  // The bound, seen: each fault in front of DynamoDB, production bounds, failing open.
  lines.push(
    `While DynamoDB fails (a fault proxy in front of moto's DynamoDB), ${FAULT_REQUESTS} requests one at a time, ` +
      `failing open, production bounds (worst added ${LIMITER_WORST_ADDED_MS} ms):`,
    '| fault | median | slowest | added to the slowest request without limits | statuses | failed open |',
    '|---|---|---|---|---|---|',
  );
  const faultTable = await tableFor('bench-faults');
  for (const fault of FAULTS) {
    lines.push(
      await faultRow(
        moto,
        fault,
        limited.paymentAssetDir,
        (endpoint) => envFor(faultTable, UNREACHED_LIMIT, endpoint),
        plain,
      ),
    );
  }
  lines.push('');

  // Calls per request: under the limit in one environment, then the flood from several.
  const counter = await startFaultProxy(moto.port);
  let underCalls: LatencyRun;
  try {
    underCalls = await latencyRun(
      limited.paymentAssetDir,
      envFor(await tableFor('bench-calls-under'), UNREACHED_LIMIT, counter.endpoint),
      () => counter.calls.filter((call) => call.operation === 'UpdateItem').length,
    );
  } finally {
    await counter.close();
  }
  const shared = await runFlood({
    assetDir: limited.paymentAssetDir,
    moto,
    ...STANDARD_FLOOD,
    floodOffered: 0,
    steadyOffered: SHARED_APP_OFFERED,
  });
  const flood = await runFlood({ assetDir: limited.paymentAssetDir, moto, ...STANDARD_FLOOD });
  const accepted = flood.run.invocations.filter((invocation) => invocation.statusCode === 200).length;
  // Every accepted request wrote once; the other writes are the refusals that found a window full.
  const failedWrites = flood.dynamoDbCalls - accepted;
  const { floodLimit, processes, floodOffered, durationMs } = STANDARD_FLOOD;
  const floodWindows = durationMs / (floodLimit.burst / floodLimit.perSecond) / 1000;
  lines.push(
    'DynamoDB calls (UpdateItem, counted by a proxy in front of moto):',
    `- under the limit, one environment: ${underCalls.calls} for ${underCalls.invocations.length} requests: ` +
      `${fmt(underCalls.calls / underCalls.invocations.length, 3)} per request`,
    `- under the limit, ${STANDARD_FLOOD.processes} environments, one app arriving at random at ${SHARED_APP_OFFERED}/s ` +
      `against its ${STANDARD_FLOOD.steadyLimit.perSecond}/s: ${shared.dynamoDbCalls} for ${shared.requests} requests: ` +
      `${fmt(shared.dynamoDbCalls / shared.requests, 3)} per request ` +
      `(${shared.steady.filter((invocation) => invocation.statusCode === 429).length} refused)`,
    `- flood: ${processes} environments, one app offered ${floodOffered}/s against ${floodLimit.perSecond}/s ` +
      `(burst ${floodLimit.burst}), another arriving at random at ${STANDARD_FLOOD.steadyOffered}/s under its own ` +
      `${STANDARD_FLOOD.steadyLimit.perSecond}/s, ${durationMs / 1000} s: ` +
      `${flood.dynamoDbCalls} for ${flood.requests} requests: ${fmt(flood.dynamoDbCalls / flood.requests, 3)} per request; ` +
      `${accepted} accepted (one write each), ${failedWrites} refusals that wrote (at most one per environment and ` +
      `window: ${processes} × ${fmt(floodWindows + 1, 0)} windows touched = ${processes * (floodWindows + 1)})`,
    `- flood, the flooding app's accepted requests per whole second: ${flood.floodAccepted.join(', ')} ` +
      `(offered: ${flood.floodOffered.join(', ')}); the app under its limit: ` +
      `${flood.steady.filter((invocation) => invocation.statusCode === 429).length} of ${flood.steady.length} refused; ` +
      `failed open: ${flood.emfTotals.RateLimiterUnavailable ?? 0}`,
    `- hot partition: one counter item takes at most ${REQUESTS_PER_SECOND_PER_ITEM} accepted requests a second; above ` +
      `${REQUESTS_PER_SECOND_PER_ITEM}/s an app's window is spread over more items (refused writes: see hot-counter)`,
    '',
  );
  return lines;
}
