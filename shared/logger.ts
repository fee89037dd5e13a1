import { errorMessage, errorName } from './errors';

/**
 * A minimal structured logger: one JSON object per line, so CloudWatch Logs Insights can query fields.
 * Callers pass only safe fields; nothing here inspects values, so never hand it a key or a secret string.
 */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const LEVEL_ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * Reads a log level from the environment variable `variable`, in any case; absent or empty means `info`.
 * Anything else is a configuration error, not a reason to log at some other level than the one asked for.
 */
export function parseLogLevel(value: string | undefined, variable: string): LogLevel {
  if (value === undefined || value === '') return 'info';
  const level = LOG_LEVELS.find((candidate) => candidate === value.toLowerCase());
  if (level === undefined) {
    throw new Error(`${variable} must be one of ${LOG_LEVELS.join(', ')}, got "${value}"`);
  }
  return level;
}

/** A logger that can add fields to every line it writes: the Lambda's request context. */
export interface ContextualLogger extends Logger {
  /** Fields for every line from now on, replacing the previous context; `{}` clears it. */
  setContext(fields: LogFields): void;
}

/**
 * Writes JSON lines through `write`: `level`, `timestamp` and `message` first, then the fixed `base` fields, the
 * current context, and the line's own fields. The default goes straight to stdout: Lambda ships it to CloudWatch
 * as is, so Logs Insights sees a JSON line (console.log would prefix it with a timestamp, request id and level).
 */
export function createJsonLogger(
  minimumLevel: LogLevel = 'info',
  write: (line: string) => void = (line) => {
    process.stdout.write(line + '\n');
  },
  base: LogFields = {},
): ContextualLogger {
  let context: LogFields = {};
  const emit = (level: LogLevel, message: string, fields?: LogFields): void => {
    if (LEVEL_ORDER[level] < LEVEL_ORDER[minimumLevel]) return;
    write(
      JSON.stringify({ level, timestamp: new Date().toISOString(), message, ...base, ...context, ...fields }),
    );
  };
  return {
    debug: (message, fields) => {
      emit('debug', message, fields);
    },
    info: (message, fields) => {
      emit('info', message, fields);
    },
    warn: (message, fields) => {
      emit('warn', message, fields);
    },
    error: (message, fields) => {
      emit('error', message, fields);
    },
    setContext: (fields) => {
      context = { ...fields };
    },
  };
}

/**
 * The most characters of an error's text a log line carries. An endpoint's error message is whatever it answered
 * (a proxy's HTML page, a body echoed back: one line was 900 KB); 256 characters name the fault.
 */
export const ERROR_TEXT_MAX_CHARS = 256;

/**
 * Describes an error for a log line by its name and message only, cut to ERROR_TEXT_MAX_CHARS (the cut marked with
 * `...`). Our own errors never carry key material, and AWS SDK errors carry service messages, not secret values;
 * stacks stay out of the response path.
 */
export function describeError(error: unknown): string {
  const message = errorMessage(error);
  if (message === undefined) return 'non-Error value thrown';
  const text = `${errorName(error) ?? 'Error'}: ${message}`;
  if (text.length <= ERROR_TEXT_MAX_CHARS) return text;
  // Never half a surrogate pair: the line stays valid UTF-8.
  let end = ERROR_TEXT_MAX_CHARS - 3;
  if (/[\uD800-\uDBFF]/.test(text.charAt(end - 1))) end--;
  return `${text.slice(0, end)}...`;
}
