/**
 * The key CLI at scale (issue 24): `keys apply --dry-run` of 100,000 adds, `keys apply` of the same into 256 shards
 * against moto behind the rules proxy (time, peak RSS, when the first shard's line came, PutSecretValue calls per
 * shard), and `keys list` of the 100,000 apps (when the first row came, and the whole). App ids are
 * `merchant-<uuid>`. The CLI runs as a process (tsx bin/keys.ts) from a checkout: this one, and, given
 * BENCH_BASE_ROOT (a clone of main with node_modules), that one too, side by side on the same machine, each
 * BENCH_KEYS_RUNS times (default 3, each into a registry of its own; min / median / max), with the load average.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg, tmpdir } from 'node:os';
import { motoSecretsManager, startMoto, type MotoServer } from '../../test/support/moto';
import { createMotoRegistry } from '../../test/support/registry-moto';
import {
  startSecretsManagerRules,
  type SecretsManagerRulesProxy,
} from '../../test/support/secrets-manager-rules';
import { fmt, median } from './stats';

const APPS = 100_000;
const SHARDS = 256;
const THIS_ROOT = join(__dirname, '..', '..');
const RUNS = Number(process.env.BENCH_KEYS_RUNS ?? '3');

interface Timed {
  readonly code: number;
  readonly ms: number;
  /** From start to the first line on standard output; undefined when none came. */
  readonly firstLineMs: number | undefined;
  readonly peakRssMb: number | undefined;
  readonly stderrTail: string;
}

/** `tsx bin/keys.ts <argv>` in `root`, under GNU time for its peak RSS; stdout is read and dropped. */
function runKeys(
  root: string,
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<Timed> {
  const started = Date.now();
  const child = spawn(
    '/usr/bin/time',
    ['-f', 'peak-rss-kb %M', join(root, 'node_modules', '.bin', 'tsx'), 'bin/keys.ts', ...argv],
    {
      cwd: root,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let firstLineMs: number | undefined;
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    if (firstLineMs === undefined && chunk.includes(10)) firstLineMs = Date.now() - started;
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-2_000);
  });
  return new Promise((resolve) => {
    child.once('close', (code) => {
      const rss = /peak-rss-kb (\d+)/.exec(stderr)?.[1];
      resolve({
        code: code ?? -1,
        ms: Date.now() - started,
        firstLineMs,
        peakRssMb: rss === undefined ? undefined : Number(rss) / 1024,
        stderrTail: stderr
          .replace(/peak-rss-kb \d+\n?/, '')
          .trim()
          .split('\n')
          .slice(-2)
          .join(' | '),
      });
    });
  });
}

/** One run's figures: ms (or MB, or calls) by column; undefined where none came. */
interface RunFigures {
  readonly dryRunMs: number;
  readonly applyMs: number;
  readonly applyRssMb: number | undefined;
  readonly firstShardMs: number | undefined;
  readonly putsPerShard: number;
  readonly shardsPut: number;
  readonly listFirstRowMs: number | undefined;
  readonly listMs: number;
  readonly failure: string | undefined;
}

async function oneRun(
  label: string,
  root: string,
  moto: MotoServer,
  proxy: SecretsManagerRulesProxy,
): Promise<RunFigures> {
  const directory = mkdtempSync(join(tmpdir(), 'bench-keys-'));
  const client = motoSecretsManager(moto);
  try {
    const registry = await createMotoRegistry({ secretsManager: client }, { shards: SHARDS });
    const changes = Array.from({ length: APPS }, () => ({ op: 'add', app: `merchant-${randomUUID()}` }));
    const file = join(directory, 'changes.json');
    writeFileSync(file, JSON.stringify({ changes }));
    const env = { ...moto.awsEnv, AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint };
    const target = ['--registry', registry.manifestName];

    const dryRun = await runKeys(root, ['apply', file, '--dry-run', ...target], env);
    const since = proxy.calls.length;
    const apply = await runKeys(
      root,
      ['apply', file, '--keys-out', join(directory, 'k.jsonl'), ...target],
      env,
    );
    const puts = new Map<string, number>();
    for (const call of proxy.calls.slice(since)) {
      if (call.operation === 'PutSecretValue' && call.refused === undefined && call.secretId !== undefined) {
        puts.set(call.secretId, (puts.get(call.secretId) ?? 0) + 1);
      }
    }
    const list = await runKeys(root, ['list', ...target], env);
    const failed = [dryRun, apply, list].find((run) => run.code !== 0);
    return {
      dryRunMs: dryRun.ms,
      applyMs: apply.ms,
      applyRssMb: apply.peakRssMb,
      firstShardMs: apply.firstLineMs,
      putsPerShard: Math.max(0, ...puts.values()),
      shardsPut: puts.size,
      listFirstRowMs: list.firstLineMs,
      listMs: list.ms,
      failure:
        failed === undefined ? undefined : `${label}: a run exited ${failed.code}: ${failed.stderrTail}`,
    };
  } finally {
    client.destroy();
    rmSync(directory, { recursive: true, force: true });
  }
}

/** `min / median / max` of one column over the runs. */
function cell(values: readonly (number | undefined)[], show: (value: number) => string): string {
  const known = values.flatMap((value) => (value === undefined ? [] : [value]));
  if (known.length === 0) return '–';
  return [Math.min(...known), median(known), Math.max(...known)].map(show).join(' / ');
}

function checkoutRow(label: string, runs: readonly RunFigures[]): string[] {
  const secs = (ms: number) => `${fmt(ms / 1000, 1)} s`;
  const mb = (value: number) => `${fmt(value, 0)} MB`;
  const column = (pick: (run: RunFigures) => number | undefined, show: (value: number) => string) =>
    cell(runs.map(pick), show);
  return [
    `| ${label} | ${column((run) => run.dryRunMs, secs)} | ${column((run) => run.applyMs, secs)} | ` +
      `${column((run) => run.applyRssMb, mb)} | ${column((run) => run.firstShardMs, secs)} | ` +
      `${Math.max(0, ...runs.map((run) => run.putsPerShard))} (${Math.min(...runs.map((run) => run.shardsPut))} shards) | ` +
      `${column((run) => run.listFirstRowMs, secs)} | ${column((run) => run.listMs, secs)} |`,
    ...runs.flatMap((run) => (run.failure === undefined ? [] : [`  (${run.failure})`])),
  ];
}

const load = () =>
  loadavg()
    .map((value) => fmt(value, 2))
    .join(' ');

export async function keysCliLines(): Promise<string[]> {
  const checkouts: [string, string][] = [['this branch', THIS_ROOT]];
  const base = process.env.BENCH_BASE_ROOT;
  if (base !== undefined && base !== '') checkouts.unshift(['main (BENCH_BASE_ROOT)', base]);
  const lines = [
    `keys CLI, ${APPS.toLocaleString('en-US')} adds of merchant-<uuid> apps into ${SHARDS} shards, moto behind the rules proxy ` +
      `(${RUNS} runs each, min / median / max; load average at the start ${load()}):`,
    '| checkout | apply --dry-run | apply | apply peak RSS | apply: first shard line | PutSecretValue per shard (max) | list: first row | list |',
    '|---|---|---|---|---|---|---|---|',
  ];
  const runs = new Map<string, RunFigures[]>(checkouts.map(([label]) => [label, []]));
  const moto = await startMoto();
  const proxy = await startSecretsManagerRules(moto.port);
  try {
    // Checkouts take turns, run by run, so a change in the machine's load falls on both alike.
    for (let run = 0; run < RUNS; run++) {
      for (const [label, root] of checkouts) runs.get(label)?.push(await oneRun(label, root, moto, proxy));
    }
  } finally {
    await proxy.close();
    await moto.stop();
  }
  for (const [label] of checkouts) lines.push(...checkoutRow(label, runs.get(label) ?? []));
  lines.push(`load average at the end: ${load()}`);
  return lines;
}
