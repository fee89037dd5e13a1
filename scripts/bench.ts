/**
 * Measures what the issue asks for, on this machine, against the built artifact:
 * bundle size, cold import time of the asset, cold start to first answer, Secrets Manager calls for 1,000
 * requests, and the cost of the auth decision for a right key, a wrong key and an unknown app.
 *
 *   npm run bench
 *
 * Needs moto's server (scripts/python-tools.sh). Figures vary by machine; nothing here asserts them.
 */
import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { authenticate } from '../lambda/keys/authenticate';
import { parseKeyring } from '../lambda/keys/keyring';
import { paymentEvent } from '../test/support/events';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../test/support/keys';
import { motoSecretsManager, startMoto } from '../test/support/moto';
import { synthesizeApp } from '../test/support/synth';

const COLD_RUNS = 15;
const REQUESTS = 1_000;
const CONCURRENCY = 50;

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** A pass-through proxy to moto that counts Secrets Manager operations by their X-Amz-Target. */
async function countingProxy(
  targetPort: number,
): Promise<{ server: Server; port: number; counts: Map<string, number> }> {
  const counts = new Map<string, number>();
  const server = createServer((incoming: IncomingMessage, outgoing: ServerResponse) => {
    const target = String(incoming.headers['x-amz-target'] ?? 'unknown').replace('secretsmanager.', '');
    counts.set(target, (counts.get(target) ?? 0) + 1);
    const upstream = request(
      {
        host: '127.0.0.1',
        port: targetPort,
        method: incoming.method,
        path: incoming.url,
        headers: incoming.headers,
      },
      (response) => {
        outgoing.writeHead(response.statusCode ?? 502, response.headers);
        response.pipe(outgoing);
      },
    );
    upstream.on('error', () => outgoing.destroy());
    incoming.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  return { server, port: typeof address === 'object' && address !== null ? address.port : 0, counts };
}

/** In a fresh Node process: time the require of the asset, then the first answer, then a burst of requests. */
const DRIVER = `
const started = process.hrtime.bigint();
const { handler } = require(process.argv[1]);
const imported = process.hrtime.bigint();
const event = JSON.parse(process.argv[2]);
const total = Number(process.argv[3]);
const concurrency = Number(process.argv[4]);
(async () => {
  const first = await handler(event, {});
  const answered = process.hrtime.bigint();
  const statuses = { [first.statusCode]: 1 };
  const burstStart = process.hrtime.bigint();
  for (let sent = 1; sent < total; sent += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, total - sent) }, () => handler(event, {}));
    for (const result of await Promise.all(batch)) statuses[result.statusCode] = (statuses[result.statusCode] || 0) + 1;
  }
  const burstEnd = process.hrtime.bigint();
  process.stderr.write(JSON.stringify({
    importMs: Number(imported - started) / 1e6,
    firstAnswerMs: Number(answered - started) / 1e6,
    burstMs: Number(burstEnd - burstStart) / 1e6,
    statuses,
  }) + '\\n');
})();
`;

interface DriverResult {
  importMs: number;
  firstAnswerMs: number;
  burstMs: number;
  statuses: Record<string, number>;
}

async function runAsset(
  assetFile: string,
  env: Record<string, string>,
  total: number,
): Promise<DriverResult> {
  const event = paymentEvent([
    ['Content-Type', 'application/json'],
    ['App-id', 'demo'],
    ['App-key', DEMO_KEY],
  ]);
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', DRIVER, assetFile, JSON.stringify(event), String(total), String(CONCURRENCY)],
    { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env }, maxBuffer: 64 * 1024 * 1024 },
  );
  const line = stderr.trim().split('\n').pop() ?? '{}';
  return JSON.parse(line) as DriverResult;
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
  return samples.map((values) => percentile(values, 50));
}

async function main(): Promise<void> {
  const outdir = mkdtempSync(join(tmpdir(), 'payment-bench-'));
  const moto = await startMoto();
  try {
    const app = await synthesizeApp(outdir);
    const assetFile = join(app.paymentAssetDir, 'index.js');
    const client = motoSecretsManager(moto);
    const created = await client.send(
      new CreateSecretCommand({ Name: 'bench/keys', SecretString: SECRET_STRING }),
    );
    client.destroy();

    const proxy = await countingProxy(moto.port);
    const env = {
      ...moto.awsEnv,
      AWS_ENDPOINT_URL: `http://127.0.0.1:${proxy.port}`,
      KEYS_SECRET_ID: created.ARN ?? '',
    };

    const size = statSync(assetFile).size;
    const gzipped = gzipSync(readFileSync(assetFile)).length;

    const cold: DriverResult[] = [];
    for (let run = 0; run < COLD_RUNS; run++) cold.push(await runAsset(assetFile, env, 1));

    proxy.counts.clear();
    const burst = await runAsset(assetFile, env, REQUESTS);
    const callsDefaultTtl = proxy.counts.get('GetSecretValue') ?? 0;

    proxy.counts.clear();
    const shortTtl = await runAsset(assetFile, { ...env, KEY_CACHE_TTL_SECONDS: '0' }, REQUESTS);
    const callsZeroTtl = proxy.counts.get('GetSecretValue') ?? 0;
    proxy.server.close();

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

    const importMs = cold.map((result) => result.importMs);
    const firstMs = cold.map((result) => result.firstAnswerMs);
    const fmt = (value: number): string => value.toFixed(1);
    console.log(`payment-api benchmark (node ${process.version}, ${COLD_RUNS} cold runs)`);
    console.log(`| measure | value |`);
    console.log(`|---|---|`);
    console.log(`| bundle size (index.js) | ${size} bytes (${gzipped} gzipped) |`);
    console.log(
      `| cold import of the asset, median / p90 | ${fmt(percentile(importMs, 50))} / ${fmt(percentile(importMs, 90))} ms |`,
    );
    console.log(
      `| cold start to first 200 (import + GetSecretValue from moto), median / p90 | ${fmt(percentile(firstMs, 50))} / ${fmt(percentile(firstMs, 90))} ms |`,
    );
    console.log(
      `| ${REQUESTS} requests (${CONCURRENCY} concurrent), default TTL 60 s: statuses | ${JSON.stringify(burst.statuses)} |`,
    );
    console.log(`| ${REQUESTS} requests, default TTL: GetSecretValue calls | ${callsDefaultTtl} |`);
    console.log(
      `| ${REQUESTS} requests, default TTL: wall time (warm, in-process) | ${fmt(burst.burstMs)} ms |`,
    );
    console.log(
      `| ${REQUESTS} requests with TTL 0 (every batch refreshes): GetSecretValue calls | ${callsZeroTtl} (${JSON.stringify(shortTtl.statuses)}) |`,
    );
    console.log(
      `| authenticate(), median per call: right key / wrong key (1-key app) / wrong key (2-key app) / unknown app | ` +
        `${rightNs.toFixed(0)} / ${wrongOneNs.toFixed(0)} / ${wrongTwoNs.toFixed(0)} / ${unknownNs.toFixed(0)} ns |`,
    );
  } finally {
    await moto.stop();
    rmSync(outdir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
