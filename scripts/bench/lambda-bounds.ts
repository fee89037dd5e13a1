/**
 * The payment Lambda's bounds at scale (issue 24), measured on what Lambda runs: the function's esbuild bundle, built
 * as the stack builds it (NodejsFunction's options, bundles.ts), required by plain `node` in a fresh process
 * (lambda-bounds-bundle-driver.ts), its shards served over HTTP by a local fake Secrets Manager in this process
 * (lambda-bounds-registry.ts). Today's bundle against main at BEFORE_COMMIT (taken from git history, so the figures
 * mean the same after the merge), interleaved, RUNS runs each, min / median / max:
 * - memory: 100,000 distinct apps asked for once each within one TTL, then a known hot app 20,000 times: RSS after
 *   them (after a full collection) and the highest seen on the way, the V8 heap (used, total), external memory,
 *   and the hot app's handler time (median, p99). Node runs with the flags Lambda's runtime gives it for the
 *   function's 256 MB (its bootstrap: new space a tenth of the memory, half of it per semi-space, old space the
 *   rest), and, for comparison, with Node's defaults (a heap sized for this machine's 24 GiB).
 * - outage: 64 shards, every GetSecretValue answered ThrottlingException after 20 ms, a flood of unknown app ids one
 *   request at a time for 6 s: calls per whole second, counted at the fake (each fetch makes up to 2 attempts).
 */
import { build } from 'esbuild';
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SLIM_BUNDLING } from '../../lib/bundled-function';
import { NODEJS_FUNCTION_OPTIONS, sizes } from './bundles';
import { PROJECT_ROOT } from './fixtures';
import {
  benchRegistry,
  startFakeSecretsManager,
  type BenchRegistry,
  type FakeSecretsManager,
} from './lambda-bounds-registry';
import { fmt, median } from './stats';

const BEFORE_COMMIT = '993eb6d8094e61fc687f25c52fc349efe48e55c1';
const RUNS = 3;
const APPS = 100_000;
const HOT_REQUESTS = 20_000;
const OUTAGE_SECONDS = 6;
const FUNCTION_MEMORY_MB = 256;

/** The V8 flags Lambda's Node.js runtime starts node with for a function of `memoryMb` (its bootstrap script). */
function lambdaNodeFlags(memoryMb: number): string[] {
  const newSpace = Math.floor(memoryMb / 10);
  return [`--max-semi-space-size=${Math.floor(newSpace / 2)}`, `--max-old-space-size=${memoryMb - newSpace}`];
}

interface Variant {
  readonly label: string;
  readonly bundle: string;
}

/** lambda/ and shared/ at `commit`, from git history, with this checkout's node_modules. */
function treeAt(commit: string, work: string): string {
  const root = join(work, 'tree');
  mkdirSync(root);
  execFileSync('bash', ['-c', `git archive ${commit} lambda shared | tar -x -C "${root}"`], {
    cwd: PROJECT_ROOT,
  });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
  return root;
}

/** The payment function's bundle from `root`, as NodejsFunction builds it (lib/bundled-function.ts). */
async function lambdaBundle(root: string, outfile: string): Promise<string> {
  await build({
    ...NODEJS_FUNCTION_OPTIONS,
    entryPoints: [join(root, 'lambda/payment/index.ts')],
    outfile,
    absWorkingDir: root,
    mainFields: [...SLIM_BUNDLING.mainFields],
  });
  return outfile;
}

async function driverBundle(outfile: string): Promise<string> {
  await build({
    bundle: true,
    platform: 'node',
    format: 'cjs',
    logLevel: 'error',
    entryPoints: [join(PROJECT_ROOT, 'scripts/bench/lambda-bounds-bundle-driver.ts')],
    outfile,
  });
  return outfile;
}

/** V8's last words when the old space is full: on Lambda, the runtime exits and the request fails. */
const HEAP_EXHAUSTED = 'JavaScript heap out of memory';

/** A run that exhausted its heap: a measured outcome (the before bundle comes close under Lambda's flags). */
class OutOfMemory extends Error {}

/** One fresh `node` running the driver over `bundle`; its figures, from file descriptor 3. */
async function drive(
  driver: string,
  nodeFlags: readonly string[],
  args: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<Record<string, number>> {
  const child = spawn(process.execPath, ['--expose-gc', ...nodeFlags, driver, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
  });
  let figures = '';
  let errors = '';
  child.stdio[3]?.on('data', (chunk: Buffer) => (figures += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  if (code !== 0 && errors.includes(HEAP_EXHAUSTED)) throw new OutOfMemory();
  if (code !== 0) throw new Error(`the driver exited ${code}: ${errors.slice(0, 2_000)}`);
  return JSON.parse(figures.trim()) as Record<string, number>;
}

function lambdaEnv(fake: FakeSecretsManager, registry: BenchRegistry, ttlSeconds: number) {
  return {
    ...registry.env,
    AWS_ENDPOINT_URL: fake.endpoint,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(FUNCTION_MEMORY_MB),
    KEY_CACHE_TTL_SECONDS: String(ttlSeconds),
  };
}

const spread = (values: readonly number[], digits: number): string =>
  `${fmt(Math.min(...values), digits)} / ${fmt(median(values), digits)} / ${fmt(Math.max(...values), digits)}`;

interface MemoryCase {
  readonly label: string;
  readonly registry: BenchRegistry;
  readonly variants: readonly Variant[];
  readonly nodeFlags: readonly string[];
}

const MEMORY_COLUMNS: readonly [string, string, number][] = [
  ['RSS after (MB)', 'afterRssMb', 0],
  ['highest RSS (MB)', 'peakRssMb', 0],
  ['heap used / total (MB)', 'afterHeapUsedMb', 0],
  ['external (MB)', 'afterExternalMb', 1],
  ['hot app median (µs)', 'hotMedianUs', 1],
  ['hot app p99 (µs)', 'hotP99Us', 0],
];

async function memoryLines(driver: string, fake: FakeSecretsManager, cases: readonly MemoryCase[]) {
  const lines = [
    `The payment Lambda's bundle under node, ${APPS.toLocaleString('en')} distinct apps within one TTL then a hot ` +
      `app ${HOT_REQUESTS.toLocaleString('en')} times, fresh process each, ${RUNS} runs, min / median / max ` +
      '(RSS after, heap and external: after a full collection):',
    `| registry | node | variant | ${MEMORY_COLUMNS.map(([title]) => title).join(' | ')} | 200s |`,
    `|---|---|---|${MEMORY_COLUMNS.map(() => '---|').join('')}---|`,
  ];
  for (const memoryCase of cases) {
    fake.serve(memoryCase.registry);
    const runs = memoryCase.variants.map(() => [] as Record<string, number>[]);
    const outOfMemory = memoryCase.variants.map(() => 0);
    for (let sample = 0; sample < RUNS; sample++) {
      for (let turn = 0; turn < memoryCase.variants.length; turn++) {
        const index = (sample + turn) % memoryCase.variants.length;
        const variant = memoryCase.variants[index];
        if (variant === undefined) continue;
        try {
          runs[index]?.push(
            await drive(
              driver,
              memoryCase.nodeFlags,
              [variant.bundle, 'memory', String(APPS), String(HOT_REQUESTS)],
              lambdaEnv(fake, memoryCase.registry, 3_600),
            ),
          );
        } catch (error) {
          if (!(error instanceof OutOfMemory)) throw error;
          outOfMemory[index] = (outOfMemory[index] ?? 0) + 1;
        }
      }
    }
    memoryCase.variants.forEach((variant, index) => {
      const figures = runs[index] ?? [];
      const column = (name: string, digits: number) =>
        figures.length === 0
          ? 'n/a'
          : spread(
              figures.map((run) => run[name] ?? 0),
              digits,
            );
      const cells = MEMORY_COLUMNS.map(([, name, digits]) =>
        name === 'afterHeapUsedMb'
          ? `${column('afterHeapUsedMb', 0)}; ${column('afterHeapTotalMb', 0)}`
          : column(name, digits),
      );
      const flags = memoryCase.nodeFlags.length === 0 ? 'defaults' : memoryCase.nodeFlags.join(' ');
      const failed = outOfMemory[index] ?? 0;
      const label =
        failed === 0 ? variant.label : `${variant.label}, out of memory in ${failed} of ${RUNS} runs`;
      lines.push(`| ${memoryCase.label} | ${flags} | ${label} | ${cells.join(' | ')} | ${column('ok', 0)} |`);
    });
  }
  return lines;
}

async function outageLines(driver: string, fake: FakeSecretsManager, variants: readonly Variant[]) {
  const registry = benchRegistry('rotating', 64, 0);
  const lines = [
    `Secrets Manager failing (ThrottlingException after 20 ms), 64 shards, unknown app ids one request at a time for ${OUTAGE_SECONDS} s, ${RUNS} runs:`,
    '| variant | GetSecretValue calls in the first second | in each later second | requests answered |',
    '|---|---|---|---|',
  ];
  const perVariant = variants.map(() => ({
    first: [] as number[],
    later: [] as number[],
    requests: [] as number[],
  }));
  for (let sample = 0; sample < RUNS; sample++) {
    for (const [index, variant] of variants.entries()) {
      fake.serve(registry);
      fake.fail(20);
      const from = fake.calls.length;
      const start = Date.now();
      const { requests = 0 } = await drive(
        driver,
        lambdaNodeFlags(FUNCTION_MEMORY_MB),
        [variant.bundle, 'outage', String(OUTAGE_SECONDS)],
        lambdaEnv(fake, registry, 60),
      );
      const calls = fake.calls.slice(from);
      // Seconds counted from the first call: the process's own start is not the outage's.
      const origin = calls[0] ?? start;
      const perSecond = Array.from(
        { length: OUTAGE_SECONDS },
        (_, second) => calls.filter((at) => Math.floor((at - origin) / 1_000) === second).length,
      );
      perVariant[index]?.first.push(perSecond[0] ?? 0);
      perVariant[index]?.later.push(...perSecond.slice(1, -1));
      perVariant[index]?.requests.push(requests);
    }
  }
  variants.forEach((variant, index) => {
    const figures = perVariant[index];
    if (figures === undefined) return;
    lines.push(
      `| ${variant.label} | ${spread(figures.first, 0)} | ${spread(figures.later, 0)} | ${spread(figures.requests, 0)} |`,
    );
  });
  return lines;
}

export async function lambdaBoundsLines(): Promise<string[]> {
  const work = mkdtempSync(join(tmpdir(), 'payment-bench-bounds-'));
  const fake = await startFakeSecretsManager();
  try {
    const beforeRoot = treeAt(BEFORE_COMMIT, work);
    const before: Variant = {
      label: `before (${BEFORE_COMMIT.slice(0, 7)})`,
      bundle: await lambdaBundle(beforeRoot, join(work, 'before.js')),
    };
    const after: Variant = {
      label: 'after',
      bundle: await lambdaBundle(PROJECT_ROOT, join(work, 'after.js')),
    };
    const driver = await driverBundle(join(work, 'driver.js'));
    const heaviest = benchRegistry('heaviest', 256, APPS);
    const rotating = benchRegistry('rotating', 1_024, APPS);
    const lambdaFlags = lambdaNodeFlags(FUNCTION_MEMORY_MB);
    const mb = (bytes: number) => fmt(bytes / 1_048_576, 1);
    return [
      `Bundles: before ${sizes(before.bundle)}, after ${sizes(after.bundle)}.`,
      `Registries: heaviest shape (two plain keys mid-rotation, an allowlist of two blocks), 256 shards, ${mb(heaviest.totalBytes)} MB, ` +
        `the largest shard ${heaviest.largestShardBytes.toLocaleString('en')} bytes (over a secret's 65,536: a bound from above); ` +
        `two d: digests mid-rotation, 1,024 shards, ${mb(rotating.totalBytes)} MB, the largest ${rotating.largestShardBytes.toLocaleString('en')} bytes (after only: 993eb6d reads neither d: digests nor 1,024 shards).`,
      ...(await memoryLines(driver, fake, [
        { label: 'heaviest, 256', registry: heaviest, variants: [before, after], nodeFlags: lambdaFlags },
        { label: 'heaviest, 256', registry: heaviest, variants: [before, after], nodeFlags: [] },
        { label: 'rotating, 1,024', registry: rotating, variants: [after], nodeFlags: lambdaFlags },
      ])),
      '',
      ...(await outageLines(driver, fake, [before, after])),
    ];
  } finally {
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  }
}
