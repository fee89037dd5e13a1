import { COMMON_HEADERS } from '../../shared/api/responses';
import type { CheckResult } from './evaluate';

export interface SmokeReport {
  /** The /payment URL that was checked. */
  readonly url: string;
  readonly appId: string;
  /** The stack the URL and key came from, with --stack. */
  readonly stack?: string;
  readonly requestsSent: number;
  readonly results: readonly CheckResult[];
}

export function reportPassed(report: SmokeReport): boolean {
  return report.results.every((result) => result.passed);
}

const COLUMNS = ['CHECK', 'EXPECTED', 'GOT', 'RESULT'] as const;

function resultCell(result: CheckResult): string {
  return result.passed ? 'pass' : `FAIL: ${result.problems.join('; ')}`;
}

/** The human report: a heading, one row per check, a verdict. */
export function formatTable(report: SmokeReport): string {
  const rows = report.results.map((result) => [
    result.title,
    result.expected,
    result.got,
    resultCell(result),
  ]);
  const widths = COLUMNS.map((heading, column) =>
    Math.max(heading.length, ...rows.map((row) => (row[column] ?? '').length)),
  );
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column] ?? 0)))
      .join('  ')
      .trimEnd();

  const source = report.stack === undefined ? '' : ` (stack ${report.stack})`;
  const failed = report.results.filter((result) => !result.passed);
  const total = report.results.length;
  const verdict =
    failed.length === 0
      ? `passed: ${total} of ${total} checks`
      : `FAILED: ${failed.length} of ${total} checks (${failed.map((result) => result.title).join(', ')})`;
  return [
    `payment-api smoke test of ${report.url}${source} as App-id ${report.appId}`,
    `every answer must be JSON with Cache-Control: ${COMMON_HEADERS['Cache-Control']}`,
    '',
    line(COLUMNS),
    ...rows.map(line),
    '',
    `${verdict}, ${report.requestsSent} ${report.requestsSent === 1 ? 'request' : 'requests'} sent`,
    '',
  ].join('\n');
}

/** The machine report: one JSON document. */
export function formatJson(report: SmokeReport): string {
  return `${JSON.stringify({
    url: report.url,
    appId: report.appId,
    ...(report.stack === undefined ? {} : { stack: report.stack }),
    passed: reportPassed(report),
    requestsSent: report.requestsSent,
    checks: report.results,
  })}\n`;
}
