import { join } from 'node:path';
import { runSmoke, type SmokeIo } from '../../../smoke/main';
import { runInProcess, spawnTool, TSX, type ToolRun } from '../../support/tool-process';

export const PROJECT_ROOT = join(__dirname, '..', '..', '..');

export type SmokeRun = ToolRun;

/** Runs the smoke test in-process with the given environment and captures both streams. */
export function runSmokeInProcess(
  argv: readonly string[],
  env: SmokeIo['env'],
  extra: Omit<SmokeIo, 'stdout' | 'stderr' | 'env'> = {},
): Promise<SmokeRun> {
  return runInProcess<SmokeIo>(runSmoke, argv, { ...extra, env });
}

/** Runs the smoke test as a user does: `npm run -s smoke -- …`, or `tsx bin/smoke.ts …` (what npm runs). */
export function spawnSmoke(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  via: 'npm' | 'tsx' = 'tsx',
): Promise<SmokeRun> {
  const quiet = {
    npm_config_update_notifier: 'false',
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    ...env,
  };
  return via === 'npm'
    ? spawnTool('npm', ['run', '-s', 'smoke', '--', ...argv], quiet)
    : spawnTool(TSX, ['bin/smoke.ts', ...argv], quiet);
}

export { ownStderrLines } from '../../support/tool-process';

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
