/**
 * Measures the payment Lambda as built, on this machine, against moto (npm run bench):
 *
 * - bundle size: the asset `cdk synth` builds, the same code without the slimming (lib/bundled-function.ts
 *   SLIM_BUNDLING), and a naive peer (scripts/naive-peer.ts) bundled the way NodejsFunction bundles with minify and
 *   the SDK inside (our options before the slimming);
 * - cold start: time to the first 200 in a fresh Node process (require, then one invocation against moto), ours and
 *   the peer interleaved, three runs, with the ratio;
 * - Secrets Manager calls per execution environment per key-cache TTL, requests sent one at a time as Lambda does;
 * - Secrets Manager faults (fault proxy): the slowest request while stale keys are usable, and the time from
 *   recovery to the first 200 with nothing usable, in-process for every fault, and on `npm start` black-holed;
 * - the auth decision's cost per call.
 *
 * Figures vary by machine; nothing here asserts them (the tests assert the bounds).
 */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { authenticate } from '../shared/keys/authenticate';
import { parseKeyring } from '../shared/keys/keyring';
import { SLIM_BUNDLING } from '../lib/bundled-function';
import { paymentEvent } from '../test/support/events';
import { FAULTS, startFaultProxy, type Fault, type FaultProxy } from '../test/support/fault-proxy';
import {
  inProcessPaymentService,
  runBrownout,
  runRecovery,
  type Probe,
} from '../test/support/fault-scenarios';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../test/support/keys';
import {
  credentials,
  killAllLocalServers,
  send,
  startLocalServer,
  stopLocalServer,
} from '../test/support/local-server-process';
import { createMotoSecret, startMoto, type MotoServer } from '../test/support/moto';
import { synthesizeApp } from '../test/support/synth';

const PROJECT_ROOT = join(__dirname, '..');
const COLD_RUNS = 3;
const COLD_SAMPLES = 21;
const TTL_WINDOW_SECONDS = 1;
const TTL_WINDOWS = 6;

const EVENT = paymentEvent([
  ['Content-Type', 'application/json'],
  ['App-id', 'demo'],
  ['App-key', DEMO_KEY],
]);

const fmt = (value: number, digits = 1): string => value.toFixed(digits);

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

const median = (values: readonly number[]): number => percentile(values, 50);

/** esbuild options NodejsFunction passes for our functions (lib/bundled-function.ts), before SLIM_BUNDLING. */
const NODEJS_FUNCTION_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  minify: true,
  logLevel: 'error',
} as const;

async function bundle(entry: string, outfile: string, slim: boolean): Promise<string> {
  await build({
    ...NODEJS_FUNCTION_OPTIONS,
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    absWorkingDir: PROJECT_ROOT,
    ...(slim ? { mainFields: [...SLIM_BUNDLING.mainFields], alias: { ...SLIM_BUNDLING.aliases } } : {}),
  });
  return outfile;
}

function sizes(file: string): string {
  const bytes = statSync(file).size;
  return `${bytes.toLocaleString('en')} bytes (${gzipSync(readFileSync(file)).length.toLocaleString('en')} gzipped)`;
}

/** In a fresh Node process: require the bundle, invoke it once; time from before the require to the answer. */
const COLD_DRIVER = `
const started = process.hrtime.bigint();
const { handler } = require(process.argv[1]);
handler(JSON.parse(process.argv[2]), { awsRequestId: 'bench', functionName: 'bench' }).then((result) => {
  const answered = process.hrtime.bigint();
  process.stderr.write(JSON.stringify({ status: result.statusCode, ms: Number(answered - started) / 1e6 }) + '\\n');
});
`;

async function coldStart(bundleFile: string, env: Record<string, string>): Promise<number> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', COLD_DRIVER, bundleFile, JSON.stringify(EVENT)],
    { env: { PATH: process.env.PATH ?? '', ...env } },
  );
  const result = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { status: number; ms: number };
  if (result.status !== 200) throw new Error(`${bundleFile} answered ${result.status}, not 200`);
  return result.ms;
}

/** In a fresh process, one request at a time for `windows` TTLs; the caller counts the calls it makes. */
const TTL_DRIVER = `
const { handler } = require(process.argv[1]);
const event = JSON.parse(process.argv[2]);
const until = Date.now() + Number(process.argv[3]);
(async () => {
  let requests = 0;
  while (Date.now() < until) {
    const result = await handler(event, { awsRequestId: 'bench-' + requests, functionName: 'bench' });
    if (result.statusCode !== 200) throw new Error('status ' + result.statusCode);
    requests++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.stderr.write(JSON.stringify({ requests }) + '\\n');
})();
`;

async function callsPerTtl(
  bundleFile: string,
  env: Record<string, string>,
  proxy: FaultProxy,
): Promise<string> {
  const before = proxy.calls.length;
  const durationMs = TTL_WINDOW_SECONDS * TTL_WINDOWS * 1000;
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', TTL_DRIVER, bundleFile, JSON.stringify(EVENT), String(durationMs)],
    { env: { PATH: process.env.PATH ?? '', ...env, KEY_CACHE_TTL_SECONDS: String(TTL_WINDOW_SECONDS) } },
  );
  const { requests } = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { requests: number };
  const calls = proxy.calls.slice(before).filter((call) => call.operation === 'GetSecretValue').length;
  return `${calls} GetSecretValue calls for ${requests} requests over ${TTL_WINDOWS} TTLs of ${TTL_WINDOW_SECONDS} s (one at init, then one per TTL): ${fmt(calls / TTL_WINDOWS, 2)} per TTL`;
}

/** Median ns per authenticate() call for each case, rounds interleaved so JIT warm-up and noise hit all alike. */
function timeAuthenticate(cases: ReadonlyArray<readonly [string, string]>, callsPerRound: number): number[] {
  const { keyring } = parseKeyring(SECRET_STRING);
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < 60; round++) {
    cases.forEach(([appId, appKey], index) => {
      const start = process.hrtime.bigint();
      for (let i = 0; i < callsPerRound; i++) authenticate({ appId, appKey }, keyring);
      if (round >= 10) samples[index]?.push(Number(process.hrtime.bigint() - start) / callsPerRound);
    });
  }
  return samples.map(median);
}

/** The handler as the Lambda composes it, in this process, pointed at `proxy`, with a 1 s TTL. */
function inProcessService(proxy: FaultProxy, secretArn: string, maxStaleMs: number): Probe {
  return inProcessPaymentService(proxy.endpoint, secretArn, { ttlMs: 1_000, maxStaleMs }, EVENT);
}

async function faultTable(moto: MotoServer, secretArn: string): Promise<string[]> {
  const rows = await Promise.all(
    FAULTS.map(async (fault: Fault) => {
      const stale = await startFaultProxy(moto.port);
      const down = await startFaultProxy(moto.port);
      try {
        const probe = inProcessService(stale, secretArn, 5 * 60_000);
        await probe();
        const brownout = await runBrownout(stale, fault, probe, { ttlMs: 1_000, durationMs: 3_000 });
        await down.setMode(fault);
        const recovery = await runRecovery(down, fault, inProcessService(down, secretArn, 0), {
          outageMs: 2_500,
          limitMs: 5_000,
        });
        const outageSlowest = Math.max(...recovery.outage.map((request) => request.tookMs));
        return (
          `| ${fault} | ${fmt(brownout.slowestMs, 0)} ms (${brownout.requests.length} requests, all 200: ` +
          `${String(brownout.requests.every((request) => request.status === 200))}) | ` +
          `${recovery.recoveryMs === undefined ? 'none' : `${fmt(recovery.recoveryMs, 0)} ms`} | ` +
          `${fmt(outageSlowest, 0)} ms | ${fmt(recovery.outageCallsPerSecond, 2)} |`
        );
      } finally {
        await Promise.all([stale.close(), down.close()]);
      }
    }),
  );
  return [
    '| fault | slowest request, stale keys usable | recovery to first 200, nothing usable | slowest 503 in the outage | GetSecretValue calls/s in the outage |',
    '|---|---|---|---|---|',
    ...rows,
  ];
}

async function localServerFigures(moto: MotoServer, secretArn: string): Promise<string[]> {
  const lines: string[] = [];
  for (const scenario of ['brownout', 'recovery'] as const) {
    const proxy = await startFaultProxy(moto.port);
    await proxy.setMode(scenario === 'brownout' ? 'pass' : 'black-holed');
    const server = await startLocalServer({
      ...moto.awsEnv,
      AWS_ENDPOINT_URL: proxy.endpoint,
      KEYS_SECRET_ID: secretArn,
      KEY_CACHE_TTL_SECONDS: '1',
      KEY_MAX_STALE_SECONDS: '300',
      LOG_LEVEL: 'error',
      PORT: '0',
    });
    const probe: Probe = async () =>
      (await send(server.baseUrl, { headers: credentials('demo', DEMO_KEY) })).status;
    try {
      if (scenario === 'brownout') {
        await probe();
        const fourAtOnce: Probe = async () => {
          const statuses = await Promise.all([probe(), probe(), probe(), probe()]);
          return Math.max(...statuses);
        };
        const report = await runBrownout(proxy, 'black-holed', fourAtOnce, {
          ttlMs: 1_000,
          durationMs: 5_000,
        });
        lines.push(
          `| npm start, black-holed, stale keys usable: slowest request | ${fmt(report.slowestMs, 0)} ms of ${report.requests.length} |`,
        );
      } else {
        const report = await runRecovery(proxy, 'black-holed', probe, { outageMs: 2_000, limitMs: 5_000 });
        lines.push(
          `| npm start, black-holed, nothing usable: recovery to the first 200 | ${report.recoveryMs === undefined ? 'none' : `${fmt(report.recoveryMs, 0)} ms`} |`,
        );
      }
    } finally {
      await stopLocalServer(server).catch(() => null);
      await proxy.close();
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'payment-bench-'));
  const moto = await startMoto();
  try {
    const app = await synthesizeApp(join(work, 'cdk.out'));
    const ours = join(app.paymentAssetDir, 'index.js');
    const unslimmed = await bundle('lambda/payment/index.ts', join(work, 'unslimmed', 'index.js'), false);
    const peer = await bundle('scripts/naive-peer.ts', join(work, 'peer', 'index.js'), false);
    const slimPeer = await bundle('scripts/naive-peer.ts', join(work, 'slim-peer', 'index.js'), true);

    const secretArn = await createMotoSecret(moto, 'bench/keys', SECRET_STRING);
    const countingProxy = await startFaultProxy(moto.port);
    // Cold starts talk to moto directly; the counting proxy (a hop in this process) is for the calls per TTL.
    const env = { ...moto.awsEnv, KEYS_SECRET_ID: secretArn };
    const countedEnv = { ...env, AWS_ENDPOINT_URL: countingProxy.endpoint };

    console.log(`payment-api benchmark (node ${process.version}, ${new Date().toISOString()})`);
    console.log('');
    console.log('| bundle | size |');
    console.log('|---|---|');
    console.log(`| payment Lambda, as cdk synth builds it | ${sizes(ours)} |`);
    console.log(`| the same code without the slimming (before) | ${sizes(unslimmed)} |`);
    console.log(
      `| naive peer, bundled as NodejsFunction does (minified CommonJS, SDK inside) | ${sizes(peer)} |`,
    );
    console.log(`| for reference: the naive peer with our slimming | ${sizes(slimPeer)} |`);

    console.log('');
    console.log(
      `Time to the first 200 in a fresh Node process (require + one invocation against moto), median of ${COLD_SAMPLES} each, interleaved:`,
    );
    console.log('| run | ours | naive peer | ratio | peer with our slimming |');
    console.log('|---|---|---|---|---|');
    const ratios: number[] = [];
    for (let run = 1; run <= COLD_RUNS; run++) {
      const samples = { ours: [] as number[], peer: [] as number[], slimPeer: [] as number[] };
      for (let sample = 0; sample < COLD_SAMPLES; sample++) {
        // Alternate who goes first, so neither always meets a warmer machine.
        const order =
          sample % 2 === 0
            ? (['ours', 'peer', 'slimPeer'] as const)
            : (['peer', 'ours', 'slimPeer'] as const);
        for (const which of order) {
          const file = which === 'ours' ? ours : which === 'peer' ? peer : slimPeer;
          samples[which].push(await coldStart(file, env));
        }
      }
      const ratio = median(samples.ours) / median(samples.peer);
      ratios.push(ratio);
      console.log(
        `| ${run} | ${fmt(median(samples.ours))} ms | ${fmt(median(samples.peer))} ms | ${fmt(ratio, 2)} | ${fmt(median(samples.slimPeer))} ms |`,
      );
    }
    console.log(
      `ratio ours / naive peer over ${COLD_RUNS} runs: min ${fmt(Math.min(...ratios), 2)}, median ${fmt(median(ratios), 2)}, max ${fmt(Math.max(...ratios), 2)} (target: at most 0.80)`,
    );

    console.log('');
    console.log(
      `Secrets Manager calls, one execution environment: ${await callsPerTtl(ours, countedEnv, countingProxy)}`,
    );
    await countingProxy.close();

    console.log('');
    console.log(
      'Secrets Manager faults, the handler as the Lambda composes it (TTL 1 s), requests one at a time:',
    );
    for (const line of await faultTable(moto, secretArn)) console.log(line);
    console.log('');
    console.log('| the local server (4 concurrent clients for the brownout) | value |');
    console.log('|---|---|');
    for (const line of await localServerFigures(moto, secretArn)) console.log(line);

    const wrongKey = 'wrong-key-0123456789abcdef';
    const [rightNs = 0, wrongOneNs = 0, wrongTwoNs = 0, unknownNs = 0] = timeAuthenticate(
      [
        ['partner', PARTNER_KEY],
        ['partner', wrongKey],
        ['demo', wrongKey],
        ['nobody', wrongKey],
      ],
      5_000,
    );
    console.log('');
    console.log(
      `authenticate(), median per call: right key ${fmt(rightNs, 0)} ns / wrong key (1-key app) ${fmt(wrongOneNs, 0)} ns / ` +
        `wrong key (2-key app) ${fmt(wrongTwoNs, 0)} ns / unknown app ${fmt(unknownNs, 0)} ns`,
    );
  } finally {
    killAllLocalServers();
    await moto.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
