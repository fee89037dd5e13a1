/**
 * The key registry over several shard secrets, measured on the payment asset `cdk synth` builds, each execution
 * environment a fresh Node process, against moto:
 *
 * - registry-cold: time to the first 200 with 10,000 apps of the heaviest measured shape in 64 shards, side by side
 *   with a 3-app single secret and with today's full single secret (interleaved, medians, the ratios); then how
 *   entries are built, eager against lazy, on the 64 shards and on the full secret.
 * - registry-calls: GetSecretValue calls per TTL per environment under mixed loads of known and unknown app ids,
 *   counted at a proxy, against the distinct shards the requests named in each TTL.
 */
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { generateKey } from '../../shared/keys/key-material';
import type { DocumentApp } from '../../shared/keys/key-document';
import { SECRET_MAX_BYTES } from '../../shared/keys/secret-size';
import { shardOf } from '../../shared/keys/shard';
import { paymentEvent } from '../../test/support/events';
import { startFaultProxy, type FaultProxy } from '../../test/support/fault-proxy';
import type { MotoServer } from '../../test/support/moto';
import { createMotoRegistry } from '../../test/support/registry-moto';
import { shardTexts } from '../../test/support/shards';
import { bundle, coldStart, sizes } from './bundles';
import { heaviestApp } from './secret-size';
import { fmt, median, percentile, spread } from './stats';

const APPS = 10_000;
const SHARDS = 64;
const COLD_RUNS = 3;
const COLD_SAMPLES = 21;
const BUILDING_SAMPLES = 21;

interface App {
  readonly appId: string;
  readonly key: string;
}

/** `partner-00000`...: app ids as operators write them, each with the current key of its heaviest-shape entry. */
function heaviestApps(count: number): { apps: App[]; documents: Map<string, DocumentApp> } {
  const apps: App[] = [];
  const documents = new Map<string, DocumentApp>();
  for (let index = 0; index < count; index++) {
    const app = { appId: `partner-${String(index).padStart(5, '0')}`, key: generateKey() };
    apps.push(app);
    documents.set(app.appId, heaviestApp(app.key));
  }
  return { apps, documents };
}

function firstOf<T>(items: readonly T[]): T {
  const first = items[0];
  if (first === undefined) throw new Error('nothing to pick from');
  return first;
}

const requestOf = ({ appId, key }: App) =>
  paymentEvent([
    ['Content-Type', 'application/json'],
    ['App-id', appId],
    ['App-key', key],
  ]);

/** A registry in moto, the environment that points the Lambda at it, and the app each cold start asks for. */
interface Variant {
  readonly label: string;
  readonly env: Record<string, string>;
  readonly event: unknown;
}

interface Registries {
  readonly threeApps: Variant;
  readonly sharded: Variant;
  readonly full: Variant;
  /** About the 64 shards: bytes per app, the fullest shard. */
  readonly shardFacts: string;
}

async function registries(moto: MotoServer): Promise<Registries> {
  const { apps, documents } = heaviestApps(APPS);
  const texts = shardTexts(documents, SHARDS);
  const sizesOf = texts.map((text) => Buffer.byteLength(text));
  const fullest = sizesOf.indexOf(Math.max(...sizesOf));
  const sharded = await createMotoRegistry(moto, { stackName: 'BenchSharded', shards: SHARDS, texts });
  // The app asked for lives on the fullest shard: the most JSON to fetch and parse.
  const askedSharded = apps.find((app) => shardOf(app.appId, SHARDS) === fullest) ?? firstOf(apps);

  const three = heaviestApps(3);
  const threeRegistry = await createMotoRegistry(moto, {
    stackName: 'BenchThree',
    shards: 1,
    texts: shardTexts(three.documents, 1),
  });

  // Today's full single secret: the most apps of the heaviest shape that fit in one secret.
  let fits = 0;
  const fullDocument = new Map<string, DocumentApp>();
  for (const app of apps) {
    fullDocument.set(app.appId, documents.get(app.appId) ?? heaviestApp());
    if (Buffer.byteLength(shardTexts(fullDocument, 1)[0] ?? '') > SECRET_MAX_BYTES) {
      fullDocument.delete(app.appId);
      break;
    }
    fits++;
  }
  const fullRegistry = await createMotoRegistry(moto, {
    stackName: 'BenchFull',
    shards: 1,
    texts: shardTexts(fullDocument, 1),
  });
  const askedFull = apps[fits - 1] ?? firstOf(apps);
  const totalBytes = sizesOf.reduce((sum, bytes) => sum + bytes, 0);
  return {
    threeApps: {
      label: '3-app single secret',
      env: threeRegistry.env,
      event: requestOf(firstOf(three.apps)),
    },
    sharded: {
      label: `${APPS.toLocaleString('en')} apps in ${SHARDS} shards`,
      env: sharded.env,
      event: requestOf(askedSharded),
    },
    full: { label: `full single secret (${fits} apps)`, env: fullRegistry.env, event: requestOf(askedFull) },
    shardFacts:
      `${APPS.toLocaleString('en')} apps of the heaviest shape, ${fmt(totalBytes / APPS, 1)} bytes each; ` +
      `fullest shard ${Math.max(...sizesOf).toLocaleString('en')} bytes (${fmt((Math.max(...sizesOf) / SECRET_MAX_BYTES) * 100, 1)}%), ` +
      `emptiest ${Math.min(...sizesOf).toLocaleString('en')} bytes; today's full single secret holds ${fits}`,
  };
}

/** Medians of interleaved cold starts, the order turned each sample so no variant always meets a warmer machine. */
async function interleaved(
  file: string,
  variants: readonly Variant[],
  samples: number,
  extraEnv: (variant: Variant) => Record<string, string> = () => ({}),
): Promise<number[][]> {
  const times = variants.map(() => [] as number[]);
  for (let sample = 0; sample < samples; sample++) {
    for (let turn = 0; turn < variants.length; turn++) {
      const index = (sample + turn) % variants.length;
      const variant = variants[index];
      if (variant === undefined) continue;
      times[index]?.push(await coldStart(file, { ...variant.env, ...extraEnv(variant) }, variant.event));
    }
  }
  return times;
}

export async function registryColdLines(moto: MotoServer, work: string, asset: string): Promise<string[]> {
  const { threeApps, sharded, full, shardFacts } = await registries(moto);
  const withMoto = (variant: Variant): Variant => ({ ...variant, env: { ...moto.awsEnv, ...variant.env } });
  const variants = [threeApps, sharded, full].map(withMoto);
  const lines = [
    shardFacts,
    `payment bundle (no rate limits), as cdk synth builds it: ${sizes(asset)} (budget: 200,000 bytes)`,
    '',
    `Time to the first 200 in a fresh Node process (require + one invocation against moto), median of ${COLD_SAMPLES} each, interleaved:`,
    `| run | ${variants.map((variant) => variant.label).join(' | ')} | ${SHARDS} shards / 3 apps | full secret / 3 apps |`,
    `|---|${variants.map(() => '---|').join('')}---|---|`,
  ];
  const ratios = { sharded: [] as number[], full: [] as number[] };
  for (let run = 1; run <= COLD_RUNS; run++) {
    const [three = [], shards = [], fullSecret = []] = await interleaved(asset, variants, COLD_SAMPLES);
    ratios.sharded.push(median(shards) / median(three));
    ratios.full.push(median(fullSecret) / median(three));
    lines.push(
      `| ${run} | ${fmt(median(three))} ms | ${fmt(median(shards))} ms | ${fmt(median(fullSecret))} ms | ` +
        `${fmt(median(shards) / median(three), 3)} | ${fmt(median(fullSecret) / median(three), 3)} |`,
    );
  }
  lines.push(
    `ratio ${SHARDS} shards / 3-app single secret over ${COLD_RUNS} runs: ${spread(ratios.sharded, 3)} (target: at most 1.1)`,
    `ratio today's full single secret / 3-app single secret: ${spread(ratios.full, 3)}`,
    '',
  );

  // Eager against lazy building, on one bundle of the same code that builds as it is told.
  const building = await bundle(
    'scripts/bench/entry-building.ts',
    join(work, 'entry-building', 'index.js'),
    true,
  );
  const cases = [
    { variant: withMoto(sharded), building: 'lazy' },
    { variant: withMoto(sharded), building: 'eager' },
    { variant: withMoto(full), building: 'lazy' },
    { variant: withMoto(full), building: 'eager' },
  ] as const;
  const labelled = cases.map(({ variant, building: how }) => ({
    ...variant,
    label: `${variant.label}, ${how}`,
  }));
  const times = await interleaved(building, labelled, BUILDING_SAMPLES, (variant) => ({
    BENCH_ENTRY_BUILDING: variant.label.endsWith('lazy') ? 'lazy' : 'eager',
  }));
  lines.push(
    `Entries built eagerly (every app at load) or lazily (the app asked for), same bundle, median of ${BUILDING_SAMPLES} each, interleaved:`,
    '| registry, building | first 200 | p90 |',
    '|---|---|---|',
    ...labelled.map(
      (variant, index) =>
        `| ${variant.label} | ${fmt(median(times[index] ?? []))} ms | ${fmt(percentile(times[index] ?? [], 90))} ms |`,
    ),
    '(the deployed Lambda builds eagerly with one secret, lazily with several shards)',
  );
  return lines;
}

/** One fresh process serving the events one at a time, a pause between; each request's start, end and status. */
const LOAD_DRIVER = `
const { readFileSync } = require('node:fs');
const { handler } = require(process.argv[1]);
const events = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const pauseMs = Number(process.argv[3]);
(async () => {
  const records = [];
  for (const [index, event] of events.entries()) {
    const startedAt = Date.now();
    const started = process.hrtime.bigint();
    const result = await handler(event, { awsRequestId: 'bench-' + index, functionName: 'bench' });
    records.push({ startedAt, endedAt: Date.now(), tookMs: Number(process.hrtime.bigint() - started) / 1e6, status: result.statusCode });
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  process.stderr.write(JSON.stringify(records) + '\\n');
})();
`;

interface LoadRecord {
  readonly startedAt: number;
  readonly endedAt: number;
  readonly tookMs: number;
  readonly status: number;
}

const TTL_SECONDS = 1;
const LOAD_WINDOWS = 6;
const PAUSE_MS = 5;

/** A load: for each request, the app id it names and whether that app exists. */
interface Load {
  readonly label: string;
  readonly requests: readonly { readonly app: App; readonly known: boolean }[];
}

function unknownApp(): App {
  return { appId: `unknown-${generateKey().slice(5, 17)}`, key: generateKey() };
}

/** A made-up id and a key that starts like the stack's (`pay_`) with its checksum wrong: refused before any lookup. */
function madeUpKeyApp(): App {
  const key = generateKey();
  const last = key.charAt(key.length - 1);
  return { appId: unknownApp().appId, key: key.slice(0, -1) + (last === '0' ? '1' : '0') };
}

/** Half 8 KB ids, half unicode ones: neither fits the App-id rule, so no shard can hold them. */
function impossibleAppId(index: number): string {
  const unique = generateKey().slice(4, 16);
  return index % 2 === 0 ? `${unique}-${'a'.repeat(8192)}` : `caf\u00e9-${unique}-\u2603`;
}

async function runLoad(
  asset: string,
  env: Record<string, string>,
  proxy: FaultProxy,
  load: Load,
  workFile: string,
): Promise<string> {
  writeFileSync(workFile, JSON.stringify(load.requests.map(({ app }) => requestOf(app))));
  const callsBefore = proxy.calls.length;
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', LOAD_DRIVER, asset, workFile, String(PAUSE_MS)],
    { env: { PATH: process.env.PATH ?? '', ...env, KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS) } },
  );
  const records = JSON.parse(stderr.trim().split('\n').pop() ?? '[]') as LoadRecord[];
  const calls = proxy.calls.slice(callsBefore).filter((call) => call.operation === 'GetSecretValue');
  const start = records[0]?.startedAt ?? 0;
  const windowOf = (at: number): number => Math.floor((at - start) / (TTL_SECONDS * 1000));
  // A call belongs to the request under way when it reached the proxy (one request at a time).
  const requestAt = (at: number): number => {
    let index = 0;
    while (index + 1 < records.length && (records[index + 1]?.startedAt ?? Infinity) <= at) index++;
    return index;
  };
  const windows = Array.from({ length: LOAD_WINDOWS + 1 }, () => ({ shards: new Set<number>(), calls: 0 }));
  records.forEach((record, index) => {
    const request = load.requests[index];
    if (request !== undefined)
      windows[windowOf(record.startedAt)]?.shards.add(shardOf(request.app.appId, SHARDS));
  });
  for (const call of calls) {
    const record = records[requestAt(call.at)];
    const window = record === undefined ? undefined : windows[windowOf(record.startedAt)];
    if (window !== undefined) window.calls++;
  }
  const full = windows.slice(0, LOAD_WINDOWS).filter((window) => window.shards.size > 0);
  const over = full.filter((window) => window.calls > window.shards.size).length;
  const took = (known: boolean) =>
    records.filter((_, index) => load.requests[index]?.known === known).map((record) => record.tookMs);
  const statuses = new Set(
    records.map((record, index) => `${load.requests[index]?.known ? 'known' : 'unknown'} ${record.status}`),
  );
  return (
    `| ${load.label} | ${records.length} | ${full.map((window) => `${window.calls}/${window.shards.size}`).join(', ')} | ` +
    `${fmt(full.reduce((sum, window) => sum + window.calls, 0) / full.length, 1)} | ${over} | ` +
    `${took(true).length > 0 ? `${fmt(median(took(true)), 1)} / ${fmt(percentile(took(true), 99), 1)} ms` : '–'} | ` +
    `${[...statuses].sort().join(', ')} |`
  );
}

export async function registryCallLines(moto: MotoServer, work: string, asset: string): Promise<string[]> {
  const { apps, documents } = heaviestApps(APPS);
  const registry = await createMotoRegistry(moto, {
    stackName: 'BenchCalls',
    shards: SHARDS,
    texts: shardTexts(documents, SHARDS),
  });
  const proxy = await startFaultProxy(moto.port);
  const requestsPerLoad = Math.ceil((LOAD_WINDOWS * TTL_SECONDS * 1000) / (PAUSE_MS + 2));
  const pick = (items: readonly App[]): App =>
    items[Math.floor(Math.random() * items.length)] ?? firstOf(items);
  const onThreeShards = apps.filter((app) => shardOf(app.appId, SHARDS) < 3);
  const loads: Load[] = [
    {
      label: 'mixed: half known apps (any shard), half unknown ids',
      requests: Array.from({ length: requestsPerLoad }, (_, index) =>
        index % 2 === 0 ? { app: pick(apps), known: true } : { app: unknownApp(), known: false },
      ),
    },
    {
      label: 'unknown ids only (a flood)',
      requests: Array.from({ length: requestsPerLoad }, () => ({ app: unknownApp(), known: false })),
    },
    {
      label: 'made-up keys with the prefix and a wrong checksum, for made-up ids (a flood)',
      requests: Array.from({ length: requestsPerLoad }, () => ({ app: madeUpKeyApp(), known: false })),
    },
    {
      label: 'App-ids no app can have (8 KB, unicode), any key',
      requests: Array.from({ length: requestsPerLoad }, (_, index) => ({
        app: { appId: impossibleAppId(index), key: generateKey() },
        known: false,
      })),
    },
    {
      label: 'known apps of 3 shards only',
      requests: Array.from({ length: requestsPerLoad }, () => ({ app: pick(onThreeShards), known: true })),
    },
  ];
  const lines = [
    `GetSecretValue calls per environment (one Node process, requests one at a time, ${PAUSE_MS} ms apart), ` +
      `TTL ${TTL_SECONDS} s, ${SHARDS} shards, counted at a proxy:`,
    '| load | requests | calls / distinct shards named, per TTL | calls per TTL | TTLs with more calls than shards named | known apps: median / p99 | answers |',
    '|---|---|---|---|---|---|---|',
  ];
  try {
    const env = { ...moto.awsEnv, ...registry.env, AWS_ENDPOINT_URL: proxy.endpoint };
    for (const [index, load] of loads.entries()) {
      lines.push(await runLoad(asset, env, proxy, load, join(work, `load-${index}.json`)));
    }
  } finally {
    await proxy.close();
  }
  return lines;
}
