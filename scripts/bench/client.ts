/**
 * The payment Lambda's AWS calls without the SDK (npm run bench -- --only client), side by side in one run:
 *
 * - bundles: ours with and without rate limits, today's (the SDK-based source before the small client, built from git
 *   history), the naive peer, the no-SDK floor, and the variants of ours measured to choose the transport and the
 *   signer; the rotation function's and the registry monitor's, which keep the SDK;
 * - cold: the first 200 in a fresh process, ours, the naive peer, the no-SDK floor and today's, interleaved, with the
 *   ratios to the peer;
 * - transport and signer: node:http against fetch (undici), our node:crypto signer (shared/aws/sigv4.ts) against
 *   aws4fetch (WebCrypto), each a variant of our bundle, interleaved cold starts;
 * - warm: the handler's time per warm request in one process, ours against today's, with and without rate limits;
 * - calls: GetSecretValue calls per key-cache TTL, ours against today's;
 * - rotation and monitor: what loading the SDK costs them (require time), to decide whether they move.
 */
import { build, type Plugin } from 'esbuild';
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFaultProxy } from '../../test/support/fault-proxy';
import { SECRET_STRING } from '../../test/support/keys';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import {
  createMotoRateLimitTable,
  EMULATOR_LIMITER_DEADLINE_MS,
  motoAccess,
  MOTO_AWS_ENV,
  type MotoServer,
} from '../../test/support/moto';
import {
  createPaymentSecretsManagerClient,
  KEY_FETCH_ATTEMPTS,
  KEY_FETCH_BUDGET_MS,
  secretsManagerSource,
} from '../../lambda/payment/secrets-manager-source';
import { createSecretsManagerClient } from '../../shared/aws/bounded-client';
import { RATE_LIMIT_ENV } from '../../lambda/payment/rate-limit/settings';
import { SLIM_BUNDLING } from '../../lib/bundled-function';
import { bundle, callsPerTtl, coldStart, NODEJS_FUNCTION_OPTIONS, sizes } from './bundles';
import { EVENT, PROJECT_ROOT } from './fixtures';
import { fmt, median, percentile, spread } from './stats';

const COLD_RUNS = 3;
const COLD_SAMPLES = 21;
const VARIANT_SAMPLES = 21;
const WARM_REQUESTS = 300;
const WARM_RUNS = 3;
const REQUIRE_SAMPLES = 11;
const WARM_CALLS = 200;

const FUNCTION_OPTIONS = NODEJS_FUNCTION_OPTIONS;
const MAIN_FIELDS = [...SLIM_BUNDLING.mainFields];

/** lib/bundled-function.ts's aliases in the baseline tree (the SDK slimmed for every bundle). */
const TODAY_ALIASES = {
  '@aws-sdk/credential-provider-node': './lambda/lambda-credentials.ts',
  '@aws-sdk/endpoint-cache': './lambda/endpoint-cache.ts',
  '@smithy/core/event-streams': './lambda/no-event-streams.ts',
};

/** Swaps one module of ours (by the end of its path) for a bench variant. */
function swap(moduleEnd: string, replacement: string): Plugin {
  return {
    name: `swap-${moduleEnd}`,
    setup(builder) {
      builder.onResolve({ filter: new RegExp(`/${moduleEnd}$`) }, (args) =>
        args.importer.includes('/bench/variants/') ? undefined : { path: join(PROJECT_ROOT, replacement) },
      );
    },
  };
}

async function variant(entry: string, outfile: string, plugins: Plugin[]): Promise<string> {
  await build({
    ...FUNCTION_OPTIONS,
    mainFields: MAIN_FIELDS,
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    absWorkingDir: PROJECT_ROOT,
    plugins,
  });
  return outfile;
}

/**
 * The last tree whose payment Lambda called AWS through the SDK: main just before the small client was merged. Fixed,
 * so "today's" figures mean the same on any branch and after the merge; the bench needs the repository's history.
 */
const SDK_BASELINE_COMMIT = 'a31dc352f860d25fa5df4b9805b4fee31fae03ad';

function baseCommit(): string {
  return execFileSync('git', ['rev-parse', '--verify', `${SDK_BASELINE_COMMIT}^{commit}`], {
    cwd: PROJECT_ROOT,
    encoding: 'utf8',
  }).trim();
}

/** Today's payment bundles, built from the base commit's lambda/ and shared/ with its SDK aliases. */
async function todaysBundles(work: string, commit: string): Promise<{ plain: string; limited: string }> {
  const tree = join(work, 'today');
  mkdirSync(tree, { recursive: true });
  execFileSync('bash', ['-c', `git archive ${commit} lambda shared | tar -x -C "${tree}"`], {
    cwd: PROJECT_ROOT,
  });
  const built = async (entry: string, out: string): Promise<string> => {
    await build({
      ...FUNCTION_OPTIONS,
      mainFields: MAIN_FIELDS,
      entryPoints: [join(tree, entry)],
      outfile: join(work, out, 'index.js'),
      absWorkingDir: tree,
      nodePaths: [join(PROJECT_ROOT, 'node_modules')],
      alias: TODAY_ALIASES,
    });
    return join(work, out, 'index.js');
  };
  return {
    plain: await built('lambda/payment/index.ts', 'today'),
    limited: await built('lambda/payment/rate-limited.ts', 'today-limited'),
  };
}

/** Interleaved cold starts: each sample runs every bundle once, the order turned each time. */
async function interleavedColdStarts(
  files: readonly string[],
  env: Record<string, string>,
  samples: number,
): Promise<number[][]> {
  const times = files.map(() => [] as number[]);
  for (let sample = 0; sample < samples; sample++) {
    for (let turn = 0; turn < files.length; turn++) {
      const index = (sample + turn) % files.length;
      times[index]?.push(await coldStart(files[index] ?? '', env));
    }
  }
  return times;
}

/** In a fresh process: the first request, then warm ones 5 ms apart; the handler's time of each, in ms. */
const WARM_DRIVER = `
const { handler } = require(process.argv[1]);
const event = JSON.parse(process.argv[2]);
const count = Number(process.argv[3]);
(async () => {
  const times = [];
  for (let index = 0; index <= count; index++) {
    const started = process.hrtime.bigint();
    const result = await handler(event, { awsRequestId: 'warm-' + index, functionName: 'bench' });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (result.statusCode !== 200) throw new Error('status ' + result.statusCode);
    if (index > 0) times.push(ms);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  process.stderr.write(JSON.stringify(times) + '\\n');
})();
`;

async function warmTimes(file: string, env: Record<string, string>): Promise<number[]> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', WARM_DRIVER, file, JSON.stringify(EVENT), String(WARM_REQUESTS)],
    { env: { PATH: process.env.PATH ?? '', ...env, LOG_LEVEL: 'warn' }, maxBuffer: 16 * 1024 * 1024 },
  );
  return JSON.parse(stderr.trim().split('\n').pop() ?? '[]') as number[];
}

/** Time to require a bundle in a fresh process: what loading its code costs a cold start, before any call. */
const REQUIRE_DRIVER = `
const started = process.hrtime.bigint();
require(process.argv[1]);
process.stderr.write('REQUIRE_MS=' + String(Number(process.hrtime.bigint() - started) / 1e6) + '\\n');
`;

async function requireMs(file: string, env: Record<string, string>): Promise<number> {
  const { stderr } = await promisify(execFile)(process.execPath, ['-e', REQUIRE_DRIVER, file], {
    // The Lambda runs Node.js 24: the SDK's notice about older Node versions is noise here.
    env: { PATH: process.env.PATH ?? '', ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  });
  return Number(/REQUIRE_MS=([\d.]+)/.exec(stderr)?.[1] ?? NaN);
}

/** Warm GetSecretValue calls, in this process: the small client and today's SDK client, same bounds, alternating. */
async function warmCallTimes(
  moto: MotoServer,
  secretArn: string,
): Promise<{ ours: number[]; sdk: number[] }> {
  const ours = secretsManagerSource(secretArn, createPaymentSecretsManagerClient(motoAccess(moto.endpoint)));
  // The SDK client bounded as ours is: the same attempts and timers, the fetch's budget as its call deadline.
  const sdk = createSecretsManagerClient(
    {
      maxAttempts: KEY_FETCH_ATTEMPTS.maxAttempts,
      connectionTimeoutMs: KEY_FETCH_ATTEMPTS.connectionTimeoutMs,
      attemptTimeoutMs: KEY_FETCH_ATTEMPTS.socketTimeoutMs ?? KEY_FETCH_BUDGET_MS,
      ...(KEY_FETCH_ATTEMPTS.retryDelayMs === undefined
        ? {}
        : { retryDelayMs: KEY_FETCH_ATTEMPTS.retryDelayMs }),
      callDeadlineMs: KEY_FETCH_BUDGET_MS,
    },
    {
      region: MOTO_AWS_ENV.AWS_REGION,
      endpoint: moto.endpoint,
      credentials: {
        accessKeyId: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
        secretAccessKey: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
      },
    },
  );
  const viaSdk = async (): Promise<void> => {
    await sdk.send(new GetSecretValueCommand({ SecretId: secretArn, VersionStage: 'AWSCURRENT' }));
  };
  const viaOurs = async (): Promise<void> => {
    await ours.fetchSecretString();
  };
  const times = { ours: [] as number[], sdk: [] as number[] };
  // Both warmed first: connections open, code compiled.
  for (let index = 0; index < 20; index++) {
    await viaOurs();
    await viaSdk();
  }
  for (let block = 0; block < WARM_CALLS / 20; block++) {
    for (const [into, call] of block % 2 === 0
      ? ([
          [times.ours, viaOurs],
          [times.sdk, viaSdk],
        ] as const)
      : ([
          [times.sdk, viaSdk],
          [times.ours, viaOurs],
        ] as const)) {
      for (let index = 0; index < 20; index++) {
        const started = performance.now();
        await call();
        into.push(performance.now() - started);
      }
    }
  }
  sdk.destroy();
  return times;
}

const ms = (value: number): string => `${fmt(value)} ms`;

export async function clientLines(moto: MotoServer, work: string, secretArn: string): Promise<string[]> {
  const commit = baseCommit();
  const dir = (name: string): string => join(work, 'client', name, 'index.js');
  const ours = await bundle('lambda/payment/index.ts', dir('ours'), true);
  const oursLimited = await bundle('lambda/payment/rate-limited.ts', dir('ours-limited'), true);
  const today = await todaysBundles(join(work, 'client'), commit);
  const peer = await bundle('scripts/naive-peer.ts', dir('peer'), false);
  const floor = await bundle('scripts/bench/floor-entry.ts', dir('floor'), true);
  const fetchVariant = await variant('lambda/payment/index.ts', dir('fetch'), [
    swap('http-transport', 'scripts/bench/variants/fetch-transport.ts'),
  ]);
  const aws4fetchVariant = await variant('lambda/payment/index.ts', dir('aws4fetch'), [
    swap('sigv4', 'scripts/bench/variants/aws4fetch-sigv4.ts'),
  ]);
  const rotation = await bundle('lambda/rotation/index.ts', dir('rotation'), true);
  const monitor = await bundle('lambda/registry-monitor/index.ts', dir('monitor'), true);

  const env = { ...moto.awsEnv, KEYS_SECRET_ID: secretArn, BENCH_SECRET_STRING: SECRET_STRING };
  const lines = [
    `Today = the SDK-based payment Lambda just before the small client (${commit.slice(0, 7)}), built from git history.`,
    '| bundle | size |',
    '|---|---|',
    `| payment Lambda (small client) | ${sizes(ours)} (target: at most 60 KB) |`,
    `| payment Lambda with rate limits | ${sizes(oursLimited)} (target: at most 70 KB) |`,
    `| today's payment Lambda (SDK) | ${sizes(today.plain)} |`,
    `| today's payment Lambda with rate limits (SDK) | ${sizes(today.limited)} |`,
    `| naive peer (SDK, bundled as NodejsFunction does) | ${sizes(peer)} |`,
    `| no-SDK floor (our handler, keys from memory) | ${sizes(floor)} |`,
    `| ours, fetch (undici) instead of node:http | ${sizes(fetchVariant)} |`,
    `| ours, aws4fetch instead of our node:crypto signer | ${sizes(aws4fetchVariant)} |`,
    `| rotation function (SDK) | ${sizes(rotation)} |`,
    `| key registry monitor (SDK) | ${sizes(monitor)} |`,
    '',
    `Time to the first 200 in a fresh Node process (require + one invocation against moto), median of ${COLD_SAMPLES} each, interleaved:`,
    '| run | ours | naive peer | ours / peer | no-SDK floor | floor / peer | today | today / peer |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const ratios = { ours: [] as number[], floor: [] as number[], today: [] as number[], gap: [] as number[] };
  for (let run = 1; run <= COLD_RUNS; run++) {
    const [o = [], p = [], f = [], t = []] = await interleavedColdStarts(
      [ours, peer, floor, today.plain],
      env,
      COLD_SAMPLES,
    );
    const [mo, mp, mf, mt] = [median(o), median(p), median(f), median(t)];
    ratios.ours.push(mo / mp);
    ratios.floor.push(mf / mp);
    ratios.today.push(mt / mp);
    ratios.gap.push(mo - mf);
    lines.push(
      `| ${run} | ${ms(mo)} | ${ms(mp)} | ${fmt(mo / mp, 2)} | ${ms(mf)} | ${fmt(mf / mp, 2)} | ${ms(mt)} | ${fmt(mt / mp, 2)} |`,
    );
  }
  lines.push(
    `ours / naive peer over ${COLD_RUNS} runs: ${spread(ratios.ours)} (target: at most 0.45); ` +
      `the floor / peer: ${spread(ratios.floor)}; today / peer: ${spread(ratios.today)}; ` +
      `ours above the floor: ${spread(ratios.gap, 1, ' ms')}`,
    '',
  );

  // Each choice in pairs of its own: two variants interleaved, so both meet the same machine.
  const [viaHttp = [], viaFetch = []] = await interleavedColdStarts(
    [ours, fetchVariant],
    env,
    VARIANT_SAMPLES,
  );
  const [viaNodeCrypto = [], viaWebCrypto = []] = await interleavedColdStarts(
    [ours, aws4fetchVariant],
    env,
    VARIANT_SAMPLES,
  );
  lines.push(
    `Choosing the transport and the signer: the first 200 in a fresh process, each a variant of our bundle, median of ${VARIANT_SAMPLES} pairs, interleaved:`,
    '| choice | chosen | other |',
    '|---|---|---|',
    `| transport | node:http/https, keep-alive Agent: ${ms(median(viaHttp))} | global fetch (undici): ${ms(median(viaFetch))} |`,
    `| signer | node:crypto (sigv4.ts): ${ms(median(viaNodeCrypto))} | aws4fetch, WebCrypto: ${ms(median(viaWebCrypto))} |`,
    '',
  );

  const calls = await warmCallTimes(moto, secretArn);
  lines.push(
    `One warm GetSecretValue against moto, in-process, the Lambda's bounds, ${WARM_CALLS} calls each in alternating blocks:`,
    '| client | median | p99 |',
    '|---|---|---|',
    `| ours (small client) | ${ms(median(calls.ours))} | ${ms(percentile(calls.ours, 99))} |`,
    `| today's (SDK, bounded-client.ts) | ${ms(median(calls.sdk))} | ${ms(percentile(calls.sdk, 99))} |`,
    '',
  );

  const tableName = 'bench-client-rate-limits';
  await createMotoRateLimitTable(moto, tableName);
  const limitedEnv = {
    ...env,
    [RATE_LIMIT_ENV.table]: tableName,
    // High enough that no request of the run is refused: every one makes its one UpdateItem.
    [RATE_LIMIT_ENV.perSecond]: '10000',
    [RATE_LIMIT_ENV.budgetMs]: String(EMULATOR_LIMITER_DEADLINE_MS),
  };
  const warm = {
    ours: [] as number[],
    today: [] as number[],
    oursLimited: [] as number[],
    todayLimited: [] as number[],
  };
  for (let run = 0; run < WARM_RUNS; run++) {
    const plainEnv = { ...env, KEY_CACHE_TTL_SECONDS: '1' };
    const pairs: [number[], string, Record<string, string>][] = [
      [warm.ours, ours, plainEnv],
      [warm.today, today.plain, plainEnv],
      [warm.oursLimited, oursLimited, limitedEnv],
      [warm.todayLimited, today.limited, limitedEnv],
    ];
    for (const [into, file, runEnv] of run % 2 === 0 ? pairs : [...pairs].reverse()) {
      into.push(...(await warmTimes(file, runEnv)));
    }
  }
  const warmRow = (label: string, times: readonly number[]): string =>
    `| ${label} | ${ms(median(times))} | ${ms(percentile(times, 99))} | ${ms(Math.max(...times))} |`;
  lines.push(
    `Warm requests: the handler's time in one process, ${WARM_REQUESTS} requests 5 ms apart after the first, ${WARM_RUNS} runs each, alternated, against moto:`,
    '| handler | median | p99 | max |',
    '|---|---|---|---|',
    warmRow('ours, key cache TTL 1 s (a refresh every second)', warm.ours),
    warmRow("today's, key cache TTL 1 s", warm.today),
    warmRow('ours with rate limits (one UpdateItem per request)', warm.oursLimited),
    warmRow("today's with rate limits", warm.todayLimited),
    '',
  );

  const proxy = await startFaultProxy(moto.port);
  try {
    const countedEnv = { ...env, AWS_ENDPOINT_URL: proxy.endpoint };
    lines.push(
      `GetSecretValue calls, ours: ${await callsPerTtl(ours, countedEnv, proxy)}`,
      `GetSecretValue calls, today's: ${await callsPerTtl(today.plain, countedEnv, proxy)}`,
      '',
    );
  } finally {
    await proxy.close();
  }

  const requires = { ours: [] as number[], rotation: [] as number[], monitor: [] as number[] };
  const monitorEnv = { ...env, ROTATION_PERIOD_HOURS: '720' };
  for (let sample = 0; sample < REQUIRE_SAMPLES; sample++) {
    requires.ours.push(await requireMs(ours, monitorEnv));
    requires.rotation.push(await requireMs(rotation, monitorEnv));
    requires.monitor.push(await requireMs(monitor, monitorEnv));
  }
  const [oursRequire, rotationRequire, monitorRequire] = [
    median(requires.ours),
    median(requires.rotation),
    median(requires.monitor),
  ];
  // Hourly, the monitor's cold start at most once a run: 730 runs a month; rotation: 4 steps a rotation.
  const monthlyMs = 730 * (monitorRequire - oursRequire);
  lines.push(
    `Loading the code (require in a fresh process, median of ${REQUIRE_SAMPLES}): payment Lambda ${ms(oursRequire)}, ` +
      `rotation function ${ms(rotationRequire)}, key registry monitor ${ms(monitorRequire)}. ` +
      `The SDK's share for the monitor, if every hourly run were cold: ${fmt(monthlyMs / 1000, 1)} s of Lambda time a month; ` +
      `for the rotation function, ${ms(4 * (rotationRequire - oursRequire))} a rotation (4 steps, each cold at worst).`,
  );
  return lines;
}
