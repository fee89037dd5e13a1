import { parseArgs, type ParseArgsConfig } from 'node:util';
import { errorMessage } from '../../shared/errors';

/** An environment variable set to '' counts as unset, as a flag given as '' does. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * node's parseArgs, whose failures become `toUsageError(one line)`. Its first sentence names the offending
 * option and never an option's value, so only that sentence is kept: a key pasted on the command line is never
 * echoed. Callers allow positionals and refuse them themselves: parseArgs would quote one.
 */
export function parseArgsQuietly<Config extends ParseArgsConfig>(
  config: Config,
  toUsageError: (message: string) => Error,
): ReturnType<typeof parseArgs<Config>> {
  try {
    return parseArgs(config);
  } catch (error) {
    const message = errorMessage(error)?.split('. ')[0] ?? '';
    throw toUsageError(message.replace(/\s+/g, ' ').trim() || 'invalid arguments');
  }
}
