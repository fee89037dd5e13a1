import { constants, type Stats } from 'node:fs';
import { lstat, open } from 'node:fs/promises';
import { SECRET_MAX_BYTES } from '../../shared/keys/secret-size';

/**
 * How long one read of a key file may take. A local file answers in microseconds; a file on a stalled network
 * share would otherwise hold every request for its shard.
 */
export const KEY_FILE_READ_DEADLINE_MS = 2_000;

/** A key file that is refused as it is: the message is the one line to show (its path, and why). */
export class KeyFileRefusedError extends Error {
  override readonly name = 'KeyFileRefusedError';
}

export interface KeyFileReadOptions {
  /** @default SECRET_MAX_BYTES (65,536): what one secret can hold, so what one shard file may. */
  readonly maxBytes?: number;
  /** @default KEY_FILE_READ_DEADLINE_MS */
  readonly deadlineMs?: number;
  /** What the file is, in the refusal's line. @default 'key file' */
  readonly what?: string;
}

function kindOf(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'a device';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

// Windows has no O_NONBLOCK (and no FIFOs in the file system): Node's typings say it is always there.
const NONBLOCK: number | undefined = (constants as Partial<typeof constants>).O_NONBLOCK;
const OPEN_FLAGS = constants.O_RDONLY | (NONBLOCK ?? 0);

/**
 * Reads a key file (the local server's keys.json, or a local registry's shard file) as the local server's stand-in
 * for GetSecretValue, bounded as Secrets Manager is:
 * - Only a regular file is read. A FIFO, a device, a directory or a socket in its place is refused at once, by
 *   lstat before opening and fstat after: reading a FIFO with no writer blocks a thread of Node's pool for good
 *   (four of them and every file read of the process hangs, its stop included), and /dev/zero never ends. The open
 *   is non-blocking, so even a FIFO that appears between the two checks cannot hold it.
 * - Over 65,536 bytes (what one secret can hold) it is refused by its size, before any of it is read: a 20 MB file
 *   took 17 s to parse, and answered no request meanwhile.
 * - The read has a deadline.
 * Each refusal is one line naming the file, and its size when that is why; the key cache then keeps serving the keys
 * it has, within its staleness bound, as it does when Secrets Manager fails.
 */
export async function readKeyFile(path: string, options: KeyFileReadOptions = {}): Promise<string> {
  const maxBytes = options.maxBytes ?? SECRET_MAX_BYTES;
  const deadlineMs = options.deadlineMs ?? KEY_FILE_READ_DEADLINE_MS;
  const what = options.what ?? 'key file';
  const entry = await lstat(path);
  if (!entry.isFile() && !entry.isSymbolicLink()) {
    throw new KeyFileRefusedError(`${what} ${path} is ${kindOf(entry)}, not a regular file: refused`);
  }
  const handle = await open(path, OPEN_FLAGS);
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) {
      throw new KeyFileRefusedError(`${what} ${path} is ${kindOf(stats)}, not a regular file: refused`);
    }
    if (stats.size > maxBytes) throw tooLarge(what, path, stats.size, maxBytes);
    const text = await handle.readFile({ encoding: 'utf8', signal: AbortSignal.timeout(deadlineMs) });
    // It may have grown since fstat.
    const bytes = Buffer.byteLength(text, 'utf8');
    if (bytes > maxBytes) throw tooLarge(what, path, bytes, maxBytes);
    return text;
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') {
      throw new KeyFileRefusedError(`${what} ${path} was not read within ${deadlineMs} ms`);
    }
    throw error;
  } finally {
    await handle.close();
  }
}

function tooLarge(what: string, path: string, bytes: number, maxBytes: number): KeyFileRefusedError {
  return new KeyFileRefusedError(
    `${what} ${path} is ${bytes.toLocaleString('en')} bytes, over the ${maxBytes.toLocaleString('en')} one secret ` +
      'can hold: refused',
  );
}
