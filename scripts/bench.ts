/**
 * Measures the payment API on this machine (npm run bench; `npm run bench -- --only secret,auth` for some sections):
 *
 * - client: the payment Lambda's AWS calls without the SDK, every figure side by side (bench/client.ts): the bundles
 *   (ours with and without limits, today's SDK-based one built from git history, a naive peer (scripts/naive-peer.ts),
 *   the no-SDK floor), time to the first 200 in a fresh Node process against moto, interleaved, with the ratios;
 *   the transport (node:http against fetch) and the signer (ours against aws4fetch) measured; warm requests, ours
 *   against today's; GetSecretValue calls per TTL; what the SDK costs the rotation function and the monitor;
 * - calls: Secrets Manager calls per execution environment per key-cache TTL, one request at a time as Lambda does;
 * - faults: Secrets Manager faults through the fault proxy: the slowest request while stale keys are usable, and
 *   the time from recovery to the first 200 with nothing usable, in-process for every fault and on `npm start`;
 * - limits: per-app rate limits (appRateLimit): the limiter's added latency per request (median, p99; under and
 *   over the limit), DynamoDB calls per request (one environment under the limit; several flooding at 6 times it,
 *   with the accepted requests per whole second), the payment bundle with and without limits;
 * - limiter-stress: the limiter with 1 and 4 environments at 0-120 ms of added store latency, and with every write
 *   throttled or the store black-holed (bench/limiter-stress.ts);
 * - limiter-flood: 4 environments flooding as fast as they can against 10/s, failing local, the store at +0 to
 *   +120 ms and black-holed, 3 runs each: the accepted requests in every whole second (bench/limiter-stress.ts);
 * - hot-counter: 1,000 environments flooding one app against a store with DynamoDB's per-item ceiling, simulated
 *   (bench/hot-counter.ts; no moto);
 * - registry-cold: the key registry over shards: time to the first 200 with 10,000 apps of the heaviest shape in 64
 *   shards, side by side with a 3-app single secret and today's full single secret, and entries built eagerly
 *   against lazily (scripts/bench/registry.ts);
 * - registry-calls: GetSecretValue calls per TTL per environment under mixed loads of known and unknown app ids,
 *   against the distinct shards the requests named;
 * - leaked: keys leaked with 100 keys against 64 shards holding 10,000 apps (BatchGetSecretValue calls and writes per
 *   shard counted at the proxy, the time over 3 runs), and 10,000 apps of the heaviest shape in 64 shards with
 *   digests the default (bench/leaked.ts);
 * - monitor: one run of the key registry monitor over 1, 16, 64 and 256 shards at 80%: calls, time, logs written;
 * - secret: how many apps one secret holds per form of entry, and one authentication against the largest;
 * - lambda-bounds: the payment Lambda's bundle under plain node, its shards served by a local fake Secrets Manager:
 *   memory after 100,000 distinct apps within one TTL (RSS, heap, external) and a hot app's time, with Lambda's node
 *   flags for 256 MB and with node's defaults; GetSecretValue calls a second with 64 shards failing; against main
 *   at 993eb6d (bench/lambda-bounds.ts);
 * - capacity: bytes per app and apps per shard at 80% for three shapes of app id, one key and two mid-rotation (d:
 *   digests), and 100,000 merchant-<uuid> apps mid-rotation over 512 and 1,024 shards against sha256: over 256;
 * - registry: the key registry over several secrets: apply of 10,000 new apps into 64 shards (PutSecretValue
 *   calls counted at a proxy, and the time), 10,000 apps of the heaviest shape in 64 shards (the fullest shard's
 *   fill), and how many one-key apps 256 shards hold;
 * - auth: the auth decision's cost per call;
 * - body: the body limit: a 6 MB body of nested arrays now (413) and parsed as before, time and peak RSS in fresh
 *   processes; the handler's time for bodies at the limits;
 * - keys-cli: the key CLI at scale: apply --dry-run and apply of 100,000 adds into 256 shards (time, peak RSS, the
 *   first shard's line, PutSecretValue per shard) and list of them (the first row), this checkout beside
 *   BENCH_BASE_ROOT's (bench/keys-cli.ts);
 * - timing: the handler's time per refusal cause (wrong key, unknown app, expired, another network) and the 401 log
 *   line's, before and after a wrong key and an unknown app logged the same fields; the first request naming an
 *   app after its shard loaded (known or not), a d: digest against a plain key (100,000 requests each), and what
 *   a request refused before any lookup costs (bench/key-timing.ts);
 * - pipeline: the time `cdk synth` of the pipeline access stack takes (bench/pipeline-synth.ts).
 *
 * Figures vary by machine; nothing here asserts them (the tests assert the bounds).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFaultProxy } from '../test/support/fault-proxy';
import { PARTNER_KEY, SECRET_STRING } from '../test/support/keys';
import { killAllLocalServers } from '../test/support/local-server-process';
import { createMotoSecret, startMoto } from '../test/support/moto';
import { synthesizeApp } from '../test/support/synth';
import { timeAuthenticate } from './bench/auth';
import { callsPerTtl } from './bench/bundles';
import { clientLines } from './bench/client';
import { faultTable, localServerFigures } from './bench/faults';
import { bodyLimitLines } from './bench/body-limit';
import { hotCounterLines } from './bench/hot-counter';
import { keysCliLines } from './bench/keys-cli';
import { leakedLines } from './bench/leaked';
import { limiterFloodLines, limiterStressLines } from './bench/limiter-stress';
import { limitLines } from './bench/limits';
import { registryLines } from './bench/registry';
import { registryCallLines, registryColdLines } from './bench/registry-reads';
import { monitorLines } from './bench/registry-monitor';
import { secretSizeLines } from './bench/secret-size';
import { capacityLines } from './bench/capacity';
import { lambdaBoundsLines } from './bench/lambda-bounds';
import { fmt } from './bench/stats';
import { keyTimingLines } from './bench/key-timing';
import { timingLines } from './bench/timing';
import { pipelineSynthLines } from './bench/pipeline-synth';

const SECTIONS = [
  'client',
  'calls',
  'faults',
  'limits',
  'limiter-stress',
  'limiter-flood',
  'hot-counter',
  'registry',
  'leaked',
  'registry-cold',
  'registry-calls',
  'monitor',
  'secret',
  'capacity',
  'lambda-bounds',
  'auth',
  'body',
  'timing',
  'pipeline',
  'keys-cli',
] as const;
type Section = (typeof SECTIONS)[number];

function chosenSections(argv: readonly string[]): ReadonlySet<Section> {
  const only = argv.indexOf('--only');
  if (only === -1) return new Set(SECTIONS);
  const names = (argv[only + 1] ?? '').split(',');
  const unknown = names.filter((name) => !(SECTIONS as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0) {
    throw new Error(`--only takes a comma-separated list of: ${SECTIONS.join(', ')}`);
  }
  return new Set(names as Section[]);
}

/**
 * The sections that need moto and a synthesized app; `registry`, `monitor` and `limiter-stress` (which synthesizes
 * its own) need only moto, `client` (which builds its own bundles) moto and a secret.
 */
const SYNTH_SECTIONS: readonly Section[] = ['calls', 'faults', 'limits', 'registry-cold', 'registry-calls'];

async function awsSections(sections: ReadonlySet<Section>): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'payment-bench-'));
  const moto = await startMoto();
  const lines: string[] = [];
  try {
    if (sections.has('registry')) lines.push(...(await registryLines(moto)), '');
    if (sections.has('monitor')) lines.push(...(await monitorLines(moto)), '');
    if (sections.has('leaked')) lines.push(...(await leakedLines(moto)), '');
    if (sections.has('limiter-stress')) {
      lines.push('The limiter under stress:', ...(await limiterStressLines(moto, work)), '');
    }
    if (sections.has('limiter-flood')) {
      lines.push('Every window filled, never unlimited:', ...(await limiterFloodLines(moto, work)), '');
    }
    if (sections.has('client')) {
      const clientSecret = await createMotoSecret(moto, 'bench/client-keys', SECRET_STRING);
      lines.push(
        "The payment Lambda's AWS calls without the SDK:",
        ...(await clientLines(moto, work, clientSecret)),
        '',
      );
    }
    if (!SYNTH_SECTIONS.some((name) => sections.has(name))) return lines;
    const app = await synthesizeApp(join(work, 'cdk.out'));
    const secretArn = await createMotoSecret(moto, 'bench/keys', SECRET_STRING);
    const ours = join(app.paymentAssetDir, 'index.js');

    if (sections.has('calls')) {
      const countingProxy = await startFaultProxy(moto.port);
      const countedEnv = {
        ...moto.awsEnv,
        KEYS_SECRET_ID: secretArn,
        AWS_ENDPOINT_URL: countingProxy.endpoint,
      };
      lines.push(
        `Secrets Manager calls, one execution environment: ${await callsPerTtl(ours, countedEnv, countingProxy)}`,
        '',
      );
      await countingProxy.close();
    }
    if (sections.has('faults')) {
      lines.push(
        'Secrets Manager faults, the handler as the Lambda composes it (TTL 1 s), requests one at a time:',
      );
      lines.push(...(await faultTable(moto, secretArn)), '');
      lines.push('| the local server (4 concurrent clients for the brownout) | value |', '|---|---|');
      lines.push(...(await localServerFigures(moto, secretArn)), '');
    }
    if (sections.has('limits')) {
      lines.push(
        'Per-app rate limits (appRateLimit):',
        ...(await limitLines(moto, work, app.paymentAssetDir)),
      );
    }
    if (sections.has('registry-cold')) {
      lines.push('Key registry over shards, cold start:', ...(await registryColdLines(moto, work, ours)), '');
    }
    if (sections.has('registry-calls')) {
      lines.push('Key registry over shards, calls:', ...(await registryCallLines(moto, work, ours)), '');
    }
  } finally {
    killAllLocalServers();
    await moto.stop();
    rmSync(work, { recursive: true, force: true });
  }
  return lines;
}

function authLine(): string {
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
  return (
    `authenticate(), median per call: right key ${fmt(rightNs, 0)} ns / wrong key (1-key app) ${fmt(wrongOneNs, 0)} ns / ` +
    `wrong key (2-key app) ${fmt(wrongTwoNs, 0)} ns / unknown app ${fmt(unknownNs, 0)} ns`
  );
}

async function main(): Promise<void> {
  // The Lambda runs Node.js 24: the SDK's notice about older Node versions is noise in the figures.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const sections = chosenSections(process.argv.slice(2));
  console.log(`payment-api benchmark (node ${process.version}, ${new Date().toISOString()})`);
  console.log('');
  if (
    [...SYNTH_SECTIONS, 'client', 'registry', 'leaked', 'monitor', 'limiter-stress', 'limiter-flood'].some(
      (name) => sections.has(name as Section),
    )
  ) {
    for (const line of await awsSections(sections)) console.log(line);
  }
  if (sections.has('hot-counter')) {
    for (const line of await hotCounterLines()) console.log(line);
    console.log('');
  }
  if (sections.has('secret')) {
    for (const line of secretSizeLines()) console.log(line);
    console.log('');
  }
  if (sections.has('capacity')) {
    for (const line of capacityLines()) console.log(line);
    console.log('');
  }
  if (sections.has('lambda-bounds')) {
    for (const line of await lambdaBoundsLines()) console.log(line);
    console.log('');
  }
  if (sections.has('auth')) console.log(authLine());
  if (sections.has('body')) {
    console.log('');
    for (const line of await bodyLimitLines()) console.log(line);
  }
  if (sections.has('timing')) {
    console.log('');
    for (const line of await timingLines()) console.log(line);
    console.log('');
    for (const line of await keyTimingLines()) console.log(line);
  }
  if (sections.has('pipeline')) {
    console.log('');
    for (const line of pipelineSynthLines()) console.log(line);
  }
  if (sections.has('keys-cli')) {
    console.log('');
    for (const line of await keysCliLines()) console.log(line);
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
