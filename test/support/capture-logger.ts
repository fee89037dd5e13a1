import { createJsonLogger, type Logger } from '../../shared/logger';

export interface CapturedLogs {
  readonly logger: Logger;
  /** Every line written, as text: what would reach CloudWatch. */
  readonly lines: string[];
  /** The parsed entries. */
  entries(): Record<string, unknown>[];
}

export function captureLogs(): CapturedLogs {
  const lines: string[] = [];
  return {
    logger: createJsonLogger('debug', (line) => lines.push(line)),
    lines,
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}
