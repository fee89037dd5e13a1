/**
 * `npx cdk synth` as a user runs it: a context problem stops the synth with one line naming it, no stack trace, and a
 * non-zero exit code. What the app makes of each key, value and environment entry (an env naming no entry of
 * cdk.json's environments among them) is test/infrastructure/bin/'s (context.test.ts, environment-settings.test.ts),
 * in memory; a successful synth with the real CLI, bundling included, is test/support/synth.ts's, for the
 * built-asset suites.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnTool, type ToolRun } from '../../support/tool-process';

const CDK = join(__dirname, '..', '..', '..', 'node_modules', '.bin', 'cdk');

// Each test runs the real CLI (tsx loading the CDK): seconds of CPU, which two busy cores stretch toward jest's 60 s.
// The deadline is set here, explicitly, rather than met by luck.
jest.setTimeout(300_000);

/** `cdk synth` in the project root, as a user runs it (startTool: a process of its own). */
function cdkSynth(outdir: string, args: readonly string[]): Promise<ToolRun> {
  return spawnTool(CDK, ['synth', '--quiet', '--output', outdir, ...args], {
    npm_config_update_notifier: 'false',
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

  // What only the real CLI can show: a context error reaches the user as one line, no stack trace, exit 1. Which line
  // each key and value gets is test/infrastructure/bin/context.test.ts's.
  it('fails on a misspelt key with one line naming the key and no stack trace', async () => {
    // Act
    const run = await cdkSynth(outdir, ['-c', 'keyCacheTTL=30']);

    // Assert
    const output = run.stdout + run.stderr;
    expect(run.code).toBe(1);
    expect(output.split('\n').filter((text) => text.startsWith('error: '))).toEqual([
      'error: context "keyCacheTTL" is not a setting of this app; did you mean "keyCacheTtlSeconds"?',
    ]);
    expect(output).not.toMatch(/^\s+at /m);
  });
});
