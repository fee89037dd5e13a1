import { errorMessage, errorName } from '../../shared/errors';
import { KEY_IN_TEXT_SOURCE } from '../../shared/keys/key-format';
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

const KEY_SHAPE = new RegExp(KEY_IN_TEXT_SOURCE, 'gi');

/**
 * The one line a tool writes on standard error when it stops. Errors of the `known` classes are the tool's own,
 * written never to hold a key; anything else is unexpected and cut to its first line (no stack), and as a last
 * guard anything shaped like a key (legacy or of the key format) is masked.
 */
export function errorLine(error: unknown, known: readonly ErrorClass[]): string {
  const text = errorMessage(error);
  const message =
    text === undefined
      ? 'unexpected failure'
      : known.some((type) => error instanceof type)
        ? text
        : `unexpected ${errorName(error) ?? 'Error'}: ${text.split('\n', 1)[0] ?? ''}`;
  // A key of the format keeps its prefix (it names the stack), a legacy one `payk_`: never a character more.
  const masked = message.replace(KEY_SHAPE, (_key, prefix: string | undefined) =>
    prefix === undefined ? `${GENERATED_KEY_PREFIX}…` : `${prefix}…`,
  );
  return `error: ${masked.replace(/\s+/g, ' ').trim()}\n`;
}
