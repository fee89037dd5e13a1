/**
 * `npx cdk synth` as a user runs it: a context problem, on the command line or in a user's own cdk.json, stops the
 * synth with one line naming it, no stack trace, and a non-zero exit code. What the app makes of each key, value and
 * environment entry is test/infrastructure/bin/'s (context.test.ts, environment-settings.test.ts), in memory; a
 * successful synth with the real CLI, bundling included, is test/support/synth.ts's, for the built-asset suites.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');

// Each test runs the real CLI (tsx loading the CDK): seconds of CPU, which two busy cores stretch toward jest's 60 s.
// The deadline is set here, explicitly, rather than met by luck.
jest.setTimeout(300_000);

interface Run {
  readonly code: number | null;
  /** stdout and stderr, interleaved as written. */
  readonly output: string;
}

function cdkSynth(outdir: string, args: readonly string[], cwd = PROJECT_ROOT): Promise<Run> {
  return new Promise((resolve, reject) => {
    const cdk = join(PROJECT_ROOT, 'node_modules', '.bin', 'cdk');
    const child = spawn(cdk, ['synth', '--quiet', '--output', outdir, ...args], {
      cwd,
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

  // One case: what only the real CLI can show is that a context error reaches the user as one line, no stack
  // trace, exit 1. Which line each key and value gets is test/infrastructure/bin/context.test.ts's.
  it.each([
    [
      'a misspelt key',
      ['-c', 'keyCacheTTL=30'],
      'error: context "keyCacheTTL" is not a setting of this app; did you mean "keyCacheTtlSeconds"?',
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

describe('npx cdk synth with settings per environment in cdk.json', () => {
  let projectDir: string;
  let outdir: string;

  beforeAll(async () => {
    // A cdk.json of a user's own: the project's app and feature flags, plus two environments.
    projectDir = await mkdtemp(join(tmpdir(), 'payment-api-environments-'));
    outdir = join(projectDir, 'cdk.out');
    const projectCdkJson = JSON.parse(await readFile(join(PROJECT_ROOT, 'cdk.json'), 'utf8')) as {
      context: Record<string, unknown>;
    };
    const cdkJson = {
      app: `${join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx')} ${join(PROJECT_ROOT, 'bin', 'payment-api.ts')}`,
      context: {
        ...projectCdkJson.context,
        environments: {
          staging: { wafRateLimit: 2000, keyCacheTtlSeconds: 30 },
          production: { wafRateLimit: 5000 },
        },
      },
    };
    await writeFile(join(projectDir, 'cdk.json'), JSON.stringify(cdkJson, null, 2));
  });

  afterAll(async () => {
    await rm(projectDir, { recursive: true, force: true });
  });

  it('fails with one line naming the known environments when env names none of them', async () => {
    // Act
    const run = await cdkSynth(outdir, ['-c', 'env=prod'], projectDir);

    // Assert
    expect(run.code).toBe(1);
    expect(run.output.split('\n').filter((text) => text.startsWith('error: '))).toEqual([
      'error: context "env" is "prod", which names no entry of "environments" in cdk.json (known: staging, production); did you mean "production"?',
    ]);
  });
});
