/**
 * `npx cdk synth` as a user runs it, with a misspelt context key or a bad value: the synth fails with one
 * line naming the key, no stack trace, and a non-zero exit code.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');

interface Run {
  readonly code: number | null;
  /** stdout and stderr, interleaved as written. */
  readonly output: string;
}

function cdkSynth(outdir: string, args: readonly string[]): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn('npx', ['cdk', 'synth', '--quiet', '--output', outdir, ...args], {
      cwd: PROJECT_ROOT,
      env: { ...process.env, npm_config_update_notifier: 'false' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer): void => {
      output += chunk.toString('utf8');
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code, output });
    });
  });
}

describe('npx cdk synth with a context problem', () => {
  let outdir: string;

  beforeAll(async () => {
    outdir = await mkdtemp(join(tmpdir(), 'payment-api-synth-'));
  });

  afterAll(async () => {
    await rm(outdir, { recursive: true, force: true });
  });

  it.each([
    [
      'a misspelt key',
      ['-c', 'keyCacheTTL=30'],
      'error: context "keyCacheTTL" is not a setting of this app; did you mean "keyCacheTtlSeconds"?',
    ],
    [
      'a bad value',
      ['-c', 'keyCacheTtlSeconds=soon'],
      'error: context "keyCacheTtlSeconds" must be a whole number of seconds from 1 to 3600, got "soon"',
    ],
  ])('fails on %s with one line naming the key and no stack trace', async (_case, args, line) => {
    // Act
    const run = await cdkSynth(outdir, args);

    // Assert
    expect(run.code).toBe(1);
    expect(run.output.split('\n').filter((text) => text.startsWith('error: '))).toEqual([line]);
    expect(run.output).not.toMatch(/^\s+at /m);
  });
});
