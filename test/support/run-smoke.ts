import type { CheckResult } from '../../tools/smoke/evaluate';
import { runSmoke, type SmokeIo } from '../../tools/smoke/main';
import type { SmokeReport } from '../../tools/smoke/report';
import { runInProcess, spawnTool, TSX, type ToolRun } from './tool-process';

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

export { ownStderrLines } from './tool-process';

/** The JSON report (tools/smoke/report.ts formatJson), as the tests read it. */
export interface JsonReport extends Omit<SmokeReport, 'results'> {
  readonly passed: boolean;
  readonly checks: readonly CheckResult[];
}

export function parseReport(stdout: string): JsonReport {
  return JSON.parse(stdout) as JsonReport;
}

export function failedIds(report: JsonReport): string[] {
  return report.checks.filter((check) => !check.passed).map((check) => check.id);
}
