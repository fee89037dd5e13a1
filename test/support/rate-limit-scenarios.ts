/**
 * Per-app rate limits at scale: the rate-limited payment asset in several execution environments (separate
 * processes, one request at a time each) against moto's Secrets Manager and DynamoDB, one app flooding while another
 * stays below its own limit. Shared by the test, which asserts the band, and by the benchmark, which prints it.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RATE_LIMIT_ENV, type LimiterFailure } from '../../lambda/payment/rate-limit/settings';
import { appWindowAt } from '../../lambda/payment/rate-limit/window';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { runFleet, type FleetRun, type Invocation } from './asset-fleet';
import { readEmfLines, totalCounts } from './emf';
import { requestOf } from './events';
import { ItemWriteQueue, startFaultProxy, type Fault } from './fault-proxy';
import { DEMO_KEY, HASHED_APP_KEY, PARTNER_KEY } from './keys';
import {
  createMotoRateLimitTable,
  createMotoSecret,
  EMULATOR_LIMITER_DEADLINE_MS,
  type MotoServer,
} from './moto';

/** The metrics sampled as levels, not counted: left out of the totals. */
const LEVEL_METRICS = ['KeysExpiringSoon', 'SecretFill'];

export { requestOf };

export interface LimitedAssetSettings {
  readonly moto: MotoServer;
  readonly secretArn: string;
  readonly tableName: string;
  /** The stack's default limit (appRateLimit, appRateBurst). */
  readonly defaultLimit: RateLimit;
  /** Where the DynamoDB calls go: moto itself, or a proxy in front of it. Secrets Manager is always moto's. */
  readonly dynamoDbEndpoint?: string;
  /** RATE_LIMIT_FAILURE. Default open. */
  readonly failure?: LimiterFailure;
  /** RATE_LIMIT_DEADLINE_MS, the check's budget; undefined: production's (150 ms). */
  readonly budgetMs?: number;
  readonly logLevel?: 'info' | 'warn';
}

/** The rate-limited asset's environment, as the stack sets it (but for the table and the endpoints). */
export function limitedAssetEnv(settings: LimitedAssetSettings): Record<string, string> {
  return {
    ...settings.moto.awsEnv,
    ...(settings.dynamoDbEndpoint === undefined
      ? {}
      : { AWS_ENDPOINT_URL_DYNAMODB: settings.dynamoDbEndpoint }),
    // The Lambda runs Node.js 24: the SDK's notice about older Node versions is noise here.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    KEYS_SECRET_ID: settings.secretArn,
    LOG_LEVEL: settings.logLevel ?? 'info',
    [RATE_LIMIT_ENV.table]: settings.tableName,
    [RATE_LIMIT_ENV.perSecond]: String(settings.defaultLimit.perSecond),
    [RATE_LIMIT_ENV.burst]: String(settings.defaultLimit.burst),
    [RATE_LIMIT_ENV.failure]: settings.failure ?? 'open',
    ...(settings.budgetMs === undefined ? {} : { [RATE_LIMIT_ENV.budgetMs]: String(settings.budgetMs) }),
  };
}

export interface FloodOptions {
  /** The folder of the rate-limited payment asset (index.js). */
  readonly assetDir: string;
  readonly moto: MotoServer;
  /** Execution environments, each a process of its own. */
  readonly processes: number;
  /** The flooding app's limit: the stack's default, since the app has none of its own. */
  readonly floodLimit: RateLimit;
  /** What the flooding app offers per second, all environments together (0: no flood). */
  readonly floodOffered: number;
  /**
   * Each environment floods as fast as it can, one request after the other, instead of at `floodOffered`: the
   * flood's next request goes as soon as the last is answered (the calm app's still go on time).
   */
  readonly floodAsFastAsPossible?: boolean;
  /** The steady app's own limit, in the secret. */
  readonly steadyLimit: RateLimit;
  /** What the steady app offers per second, all environments together. */
  readonly steadyOffered: number;
  /** How the steady app's requests arrive. Default paced. */
  readonly steadyArrivals?: 'paced' | 'random';
  readonly durationMs: number;
  /**
   * The limiter's bounds: `emulator` (EMULATOR_LIMITER_DEADLINE_MS, so moto's speed never shows as a failure) or
   * `production` (150 ms, as deployed). Default emulator.
   */
  readonly bounds?: 'emulator' | 'production';
  /** Latency added to every DynamoDB call by the proxy in front of moto. Default 0. */
  readonly latencyMs?: number;
  /** DynamoDB failing this way for the whole run (from the start instant on, the warm-up done). Default none. */
  readonly fault?: Fault;
  /** RATE_LIMIT_FAILURE. Default open. */
  readonly failure?: LimiterFailure;
  /**
   * The environments' CPU niceness (os.setPriority, 1 to 19): above 0, moto and the proxies come before them on a
   * busy CPU, as DynamoDB, on machines of its own, never waits for a Lambda's flood. Default 0 (as the test runner).
   */
  readonly environmentNiceness?: number;
}

/**
 * The flood the test asserts and the benchmark prints: 3 environments, one app at 6 times its 10/s, another arriving
 * at random at 2/s under its own 10/s, for 8 s. Modest, because moto answers some tens of calls a second on two busy
 * cores. Random arrivals bunch: the steady app's 10 a window leave room enough that more than 10 of its requests
 * fall in one second about once in 100,000 seconds (Poisson, mean 2); at 3/s it would be once in 3,400.
 */
export const STANDARD_FLOOD = {
  processes: 3,
  floodLimit: { perSecond: 10, burst: 10 },
  floodOffered: 60,
  steadyLimit: { perSecond: 10, burst: 10 },
  steadyOffered: 2,
  steadyArrivals: 'random',
  durationMs: 8_000,
} as const satisfies Omit<FloodOptions, 'assetDir' | 'moto'>;

export interface FloodReport {
  readonly run: FleetRun;
  /** The flooding app's 200s in each whole second from the start (index 0: the first second). */
  readonly floodAccepted: readonly number[];
  /** The flooding app's requests in each whole second from the start. */
  readonly floodOffered: readonly number[];
  /**
   * The flooding app's requests in each whole second whose check the shared count could not answer
   * (RateLimiterUnavailable: past the budget, failing, or the breaker open): decided by the environment's own count
   * when failing local.
   */
  readonly floodUnavailable: readonly number[];
  /** Of those, the ones accepted (200 without the RateLimit fields): what the local counts admitted. */
  readonly floodAcceptedLocally: readonly number[];
  /** The flooding app's answers other than 200 and 429 (none expected). */
  readonly floodOther: readonly Invocation[];
  /** The flooding app's 429s. */
  readonly floodLimited: readonly Invocation[];
  /** Every answer to the steady app. */
  readonly steady: readonly Invocation[];
  /** UpdateItem calls that reached DynamoDB from the start on (counted by a proxy in front of moto). */
  readonly dynamoDbCalls: number;
  /** Each environment's UpdateItem calls from the start on, milliseconds after it (each has a proxy of its own). */
  readonly callsByEnvironment: readonly (readonly number[])[];
  /** Requests made from the start on, both apps. */
  readonly requests: number;
  /** Every environment's EMF counts added up, from the start on (each invocation writes one line; warm-ups left out). */
  readonly emfTotals: Readonly<Record<string, number>>;
  /** The requests answered without the limiter's decision: 503 (failing closed) or 200 without RateLimit fields. */
  readonly unavailable: readonly Invocation[];
}

/** The app that floods, and how long before one of its windows starts the run starts. */
const FLOOD_APP = 'flood';
const FLOOD_LEAD_MS = 50;

/** What each environment serves before the start: it loads the keys and opens its connections. */
const WARM_UP = [requestOf('warmup', HASHED_APP_KEY)];

/** A request the limiter could not decide: 503 when failing closed, a 200 without the RateLimit fields when open. */
export function answeredWithoutLimiter(invocation: Invocation): boolean {
  return (
    invocation.statusCode === 503 ||
    (invocation.statusCode === 200 && invocation.headers.RateLimit === undefined)
  );
}

function perWholeSecond(invocations: readonly Invocation[], startAt: number, seconds: number): number[] {
  const counts = Array.from({ length: seconds }, () => 0);
  for (const invocation of invocations) {
    const second = Math.floor((invocation.startedAt - startAt) / 1000);
    if (second >= 0 && second < seconds) counts[second] = (counts[second] ?? 0) + 1;
  }
  return counts;
}

/**
 * The invocations whose EMF line counts RateLimiterUnavailable. Each invocation writes one EMF line, so each
 * process's lines after its warm-up's follow its invocations one for one.
 */
function uncountedInvocations(fleet: FleetRun): Set<Invocation> {
  const found = new Set<Invocation>();
  fleet.outputs.forEach((output, process) => {
    const lines = readEmfLines(output).lines.slice(WARM_UP.length);
    const invocations = fleet.invocations.filter((invocation) => invocation.process === process);
    invocations.forEach((invocation, index) => {
      if ((lines[index]?.counts.RateLimiterUnavailable ?? 0) > 0) found.add(invocation);
    });
  });
  return found;
}

/**
 * One flood: a secret with the flooding app (no limit of its own), the steady app (a limit of its own) and an app
 * each environment warms up with; a fresh counter table; a counting proxy in front of moto's DynamoDB per
 * environment, the proxies handing moto each item's writes one at a time (ItemWriteQueue), as DynamoDB applies them. Every
 * environment offers its share of both apps' rates from one start instant for `durationMs`. The limiter gets
 * EMULATOR_LIMITER_DEADLINE_MS unless `bounds` is `production`, so moto's speed never shows as a fail-open.
 *
 * The run starts FLOOD_LEAD_MS (50 ms) before one of the flooding app's windows starts, so each whole second counted
 * from the start holds the start of one of its windows and the first 950 ms of it, where that window fills. The 50
 * ms are for a request timed as it starts just before a window and checked, a moment later, in it. Counted from any
 * other instant, a second can hold the end of one window's filling and the start of the next's, and how a window's
 * requests split between two seconds depends on how fast the machine answers them, not on the limiter: a window of
 * 10 that took 300 ms to fill on two busy cores showed as 4 in one second and 15 in the next. The limit is enforced
 * per window (window.ts); the first second, which holds the end of the window before, is left out of the band.
 */
export async function runFlood(options: FloodOptions): Promise<FloodReport> {
  const run = randomUUID().slice(0, 8);
  const secretArn = await createMotoSecret(
    options.moto,
    `payment-api/flood-${run}`,
    JSON.stringify({
      [FLOOD_APP]: DEMO_KEY,
      steady: { keys: [PARTNER_KEY], rateLimit: options.steadyLimit },
      warmup: HASHED_APP_KEY,
    }),
  );
  const tableName = `rate-limits-${run}`;
  await createMotoRateLimitTable(options.moto, tableName);
  // One proxy per environment, so its calls can be told apart; one queue for them all, so that moto applies each
  // item's conditional writes one at a time, as DynamoDB does (moto alone lets concurrent ones past the capacity).
  const itemWrites = new ItemWriteQueue();
  const proxies = await Promise.all(
    Array.from({ length: options.processes }, () => startFaultProxy(options.moto.port, { itemWrites })),
  );
  for (const proxy of proxies) proxy.setLatency(options.latencyMs ?? 0);
  const niceness = lowerPriority(options.environmentNiceness);
  try {
    const perProcess = (total: number): number => total / options.processes;
    const fleet = await runFleet({
      assetDir: options.assetDir,
      env: limitedAssetEnv({
        moto: options.moto,
        secretArn,
        tableName,
        defaultLimit: options.floodLimit,
        ...(options.failure === undefined ? {} : { failure: options.failure }),
        ...(options.bounds === 'production' ? {} : { budgetMs: EMULATOR_LIMITER_DEADLINE_MS }),
        // Only what goes wrong: 100+ request lines a second would only load the two cores.
        logLevel: 'warn',
      }),
      processes: proxies.map((proxy) => ({
        AWS_ENDPOINT_URL_DYNAMODB: proxy.endpoint,
        ...(niceness === undefined ? {} : { NODE_OPTIONS: `--require ${niceness.preload}` }),
      })),
      startAt: (earliest) =>
        appWindowAt(FLOOD_APP, options.floodLimit, earliest + FLOOD_LEAD_MS).endMs - FLOOD_LEAD_MS,
      warmUp: WARM_UP,
      // With the production bounds, the warm-up's own check may not be decided in time on a busy machine: failing
      // closed, it then gets 503. It only loads the keys and opens the connections; it is not measured.
      warmUpStatus: options.bounds === 'production' && options.failure === 'closed' ? [200, 503] : 200,
      beforeStart: async () => {
        if (options.fault !== undefined) {
          const fault = options.fault;
          await Promise.all(proxies.map((proxy) => proxy.setMode(fault)));
        }
      },
      workload: {
        kind: 'streams',
        durationMs: options.durationMs,
        streams: [
          {
            name: 'flood',
            event: requestOf(FLOOD_APP, DEMO_KEY),
            // As fast as it can: a rate no process reaches, and a late request skipped rather than owed, so the
            // calm app's requests still come in their turn.
            perSecond: options.floodAsFastAsPossible === true ? 1_000_000 : perProcess(options.floodOffered),
            whenLate: options.floodAsFastAsPossible === true ? ('skip' as const) : ('send' as const),
          },
          {
            name: 'steady',
            event: requestOf('steady', PARTNER_KEY),
            perSecond: perProcess(options.steadyOffered),
            whenLate: 'skip' as const,
            arrivals: options.steadyArrivals ?? ('paced' as const),
          },
        ].filter((stream) => stream.perSecond > 0),
      },
    });
    const seconds = Math.floor(options.durationMs / 1000);
    const flood = fleet.invocations.filter((invocation) => invocation.stream === 'flood');
    const unavailable = uncountedInvocations(fleet);
    const floodUnavailable = flood.filter((invocation) => unavailable.has(invocation));
    const callsByEnvironment = proxies.map((proxy) =>
      proxy.calls
        .filter((call) => call.operation === 'UpdateItem' && call.at >= fleet.startAt)
        .map((call) => call.at - fleet.startAt),
    );
    return {
      run: fleet,
      floodAccepted: perWholeSecond(
        flood.filter((invocation) => invocation.statusCode === 200),
        fleet.startAt,
        seconds,
      ),
      floodOffered: perWholeSecond(flood, fleet.startAt, seconds),
      floodUnavailable: perWholeSecond(floodUnavailable, fleet.startAt, seconds),
      floodAcceptedLocally: perWholeSecond(
        floodUnavailable.filter((invocation) => invocation.statusCode === 200),
        fleet.startAt,
        seconds,
      ),
      floodOther: flood.filter((invocation) => ![200, 429].includes(invocation.statusCode)),
      floodLimited: flood.filter((invocation) => invocation.statusCode === 429),
      steady: fleet.invocations.filter((invocation) => invocation.stream === 'steady'),
      dynamoDbCalls: callsByEnvironment.reduce((total, calls) => total + calls.length, 0),
      callsByEnvironment,
      requests: fleet.invocations.length,
      emfTotals: totalCounts(
        fleet.outputs.flatMap((output) => readEmfLines(output).lines.slice(WARM_UP.length)),
        LEVEL_METRICS,
      ),
      unavailable: fleet.invocations.filter(answeredWithoutLimiter),
    };
  } finally {
    niceness?.remove();
    await Promise.all(proxies.map((proxy) => proxy.close()));
  }
}

/** A module each environment loads first (NODE_OPTIONS=--require), setting its own CPU niceness; none for 0. */
function lowerPriority(
  niceness: number | undefined,
): { readonly preload: string; remove(): void } | undefined {
  if (niceness === undefined || niceness === 0) return undefined;
  if (!Number.isInteger(niceness) || niceness < 1 || niceness > 19) {
    throw new Error(`environmentNiceness must be a whole number from 1 to 19, not ${niceness}`);
  }
  const directory = mkdtempSync(join(tmpdir(), 'payment-flood-nice-'));
  const preload = join(directory, 'nice.cjs');
  writeFileSync(preload, `require('node:os').setPriority(${niceness});\n`);
  return {
    preload,
    remove: () => {
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
