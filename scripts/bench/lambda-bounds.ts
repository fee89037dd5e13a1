/**
 * The payment Lambda's bounds at scale (issue 24), today's key code against the one before them, each run in a fresh
 * process by lambda-bounds-driver.ts, interleaved, min / median / max over the runs:
 * - memory: RSS after 100,000 distinct apps of the heaviest shape (256 shards) asked for within one TTL, and a known
 *   hot app's handler time after them (median, p99);
 * - outage: 64 shards failing every fetch, a flood of unknown app ids one request at a time: fetches started per
 *   whole second (the payment client makes 2 attempts per fetch: calls are twice these).
 * "Before" is main at BEFORE_COMMIT, taken from git history, so the figures mean the same after the merge.
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PROJECT_ROOT } from './fixtures';
import { fmt, median } from './stats';

const BEFORE_COMMIT = '993eb6d8094e61fc687f25c52fc349efe48e55c1';
const RUNS = 3;

function treeAt(commit: string): { root: string; remove: () => void } {
  const work = mkdtempSync(join(tmpdir(), 'payment-bench-bounds-'));
  const root = join(work, 'tree');
  mkdirSync(root);
  execFileSync('bash', ['-c', `git archive ${commit} lambda shared | tar -x -C "${root}"`], {
    cwd: PROJECT_ROOT,
  });
  symlinkSync(join(PROJECT_ROOT, 'node_modules'), join(root, 'node_modules'));
  return {
    root,
    remove: () => {
      rmSync(work, { recursive: true, force: true });
    },
  };
}

async function run(root: string, mode: 'memory' | 'outage'): Promise<Record<string, number>> {
  const { stdout } = await promisify(execFile)(
    join(PROJECT_ROOT, 'node_modules/.bin/tsx'),
    [join(PROJECT_ROOT, 'scripts/bench/lambda-bounds-driver.ts'), root, mode],
    { env: { ...process.env, NODE_OPTIONS: '--expose-gc' }, maxBuffer: 1 << 20 },
  );
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, number>;
}

const spread = (values: readonly number[], digits: number) =>
  `${fmt(Math.min(...values), digits)} / ${fmt(median([...values]), digits)} / ${fmt(Math.max(...values), digits)}`;

export async function lambdaBoundsLines(): Promise<string[]> {
  const before = treeAt(BEFORE_COMMIT);
  try {
    const variants = [
      { label: `before (${BEFORE_COMMIT.slice(0, 7)})`, root: before.root },
      { label: 'after', root: PROJECT_ROOT },
    ];
    const memory = variants.map(() => [] as Record<string, number>[]);
    const outage = variants.map(() => [] as Record<string, number>[]);
    for (let sample = 0; sample < RUNS; sample++) {
      for (let turn = 0; turn < variants.length; turn++) {
        const index = (sample + turn) % variants.length;
        const variant = variants[index];
        if (variant === undefined) continue;
        memory[index]?.push(await run(variant.root, 'memory'));
        outage[index]?.push(await run(variant.root, 'outage'));
      }
    }
    const lines = [
      `The payment Lambda's key code at scale, fresh process each (tsx), ${RUNS} runs each, min / median / max:`,
      '| | RSS after 100,000 distinct apps (MB) | hot app median (µs) | hot app p99 (µs) | fetch starts per second, 64 shards failing (first second; the others) |',
      '|---|---|---|---|---|',
    ];
    variants.forEach((variant, index) => {
      const runs = memory[index] ?? [];
      const outages = outage[index] ?? [];
      const first = outages.map((figures) => figures.second0 ?? 0);
      const later = outages.flatMap((figures) =>
        [1, 2, 3, 4, 5].map((second) => figures[`second${second}`] ?? 0),
      );
      lines.push(
        `| ${variant.label} | ${spread(
          runs.map((figures) => figures.rssMb ?? 0),
          0,
        )} | ` +
          `${spread(
            runs.map((figures) => figures.hotMedianUs ?? 0),
            1,
          )} | ${spread(
            runs.map((figures) => figures.hotP99Us ?? 0),
            0,
          )} | ` +
          `${spread(first, 0)}; ${spread(later, 0)} |`,
      );
    });
    return lines;
  } finally {
    before.remove();
  }
}
