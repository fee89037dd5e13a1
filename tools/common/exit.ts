import { errorMessage, errorName } from '../../shared/errors';
import { GENERATED_KEY_PREFIX } from '../../shared/keys/key-material';

/** What every tool exits with: scripts tell success, a failure and a mistyped command apart by these alone. */
export const EXIT_CODES = { ok: 0, failed: 1, usage: 2 } as const;

export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];

/** Bad command-line input. The message is one line and never echoes a value that could be a key. */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

/** A failure is bad usage (2) or anything else (1). */
export function exitCodeOf(error: unknown): ExitCode {
  return error instanceof UsageError ? EXIT_CODES.usage : EXIT_CODES.failed;
}

type ErrorClass = abstract new (...args: never[]) => Error;

const GENERATED_KEY_SHAPE = new RegExp(`${GENERATED_KEY_PREFIX}[A-Za-z0-9_-]+`, 'gi');

/**
 * The one line a tool writes on standard error when it stops. Errors of the `known` classes are the tool's own,
 * written never to hold a key; anything else is unexpected and cut to its first line (no stack), and as a last
 * guard anything shaped like a generated key is masked.
 */
export function errorLine(error: unknown, known: readonly ErrorClass[]): string {
  const text = errorMessage(error);
  const message =
    text === undefined
      ? 'unexpected failure'
      : known.some((type) => error instanceof type)
        ? text
        : `unexpected ${errorName(error) ?? 'Error'}: ${text.split('\n', 1)[0] ?? ''}`;
  const masked = message.replace(GENERATED_KEY_SHAPE, `${GENERATED_KEY_PREFIX}…`);
  return `error: ${masked.replace(/\s+/g, ' ').trim()}\n`;
}
