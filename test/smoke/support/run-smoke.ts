import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { runSmoke, type SmokeIo } from '../../../smoke/main';

export const PROJECT_ROOT = join(__dirname, '..', '..', '..');

export interface SmokeRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the smoke test in-process with the given environment and captures both streams. */
export async function runSmokeInProcess(
  argv: readonly string[],
  env: SmokeIo['env'],
  extra: Omit<SmokeIo, 'stdout' | 'stderr' | 'env'> = {},
): Promise<SmokeRun> {
  let stdout = '';
  let stderr = '';
  const code = await runSmoke(argv, {
    ...extra,
    env,
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
  });
  return { code, stdout, stderr };
}

/**
 * Runs the smoke test as a user does: `npm run -s smoke -- …`, or `tsx bin/smoke.ts …` (what npm runs, without
 * npm's start-up time). `PATH` and `HOME` are kept so node and npm are found; nothing else of this process's
 * environment leaks in.
 */
export function spawnSmoke(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  via: 'npm' | 'tsx' = 'tsx',
): Promise<SmokeRun> {
  const [file, prefix] =
    via === 'npm'
      ? ['npm', ['run', '-s', 'smoke', '--']]
      : [join(PROJECT_ROOT, 'node_modules', '.bin', 'tsx'), ['bin/smoke.ts']];
  return new Promise((resolve, reject) => {
    const child = spawn(file, [...prefix, ...argv], {
      cwd: PROJECT_ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        npm_config_update_notifier: 'false',
        AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      resolve({ code: code ?? -1, stdout, stderr });
    });
  });
}

/** npm may warn about the machine's own npmrc on stderr; those lines are npm's, not the smoke test's. */
export function ownStderrLines(stderr: string): string[] {
  return stderr.split('\n').filter((line) => line !== '' && !line.startsWith('npm warn'));
}

/** The JSON report's shape, as far as the tests read it. */
export interface JsonReport {
  readonly url: string;
  readonly appId: string;
  readonly stack?: string;
  readonly passed: boolean;
  readonly requestsSent: number;
  readonly checks: readonly {
    readonly id: string;
    readonly title: string;
    readonly expected: string;
    readonly got: string;
    readonly status?: number;
    readonly passed: boolean;
    readonly problems: readonly string[];
  }[];
}

export function parseReport(stdout: string): JsonReport {
  return JSON.parse(stdout) as JsonReport;
}

export function failedIds(report: JsonReport): string[] {
  return report.checks.filter((check) => !check.passed).map((check) => check.id);
}
