import { open, unlink, type FileHandle } from 'node:fs/promises';
import { errorCode } from '../../shared/errors';
import { KeyStoreError } from './key-store';

/**
 * Where `apply` puts the keys it creates: a file it creates itself with mode 0600 and never overwrites, or standard
 * output. Each shard's keys are written as soon as that shard's write has landed (and the file synced), so a key
 * that was stored is never lost with a later failure, and a key that was not stored is never handed out. One JSON
 * object a line: {"appId","keyId","key"}, plus "expires" when the key has one.
 */
export interface KeySink {
  /** `keys.jsonl`, or `standard output`. */
  readonly description: string;
  write(lines: readonly string[]): Promise<void>;
  /** Closes the file; an empty file of a run that stored no key is removed. */
  close(stored: number): Promise<void>;
}

export async function fileKeySink(path: string): Promise<KeySink> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'wx', 0o600);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'EEXIST') {
      throw new KeyStoreError(
        `--keys-out ${path} already exists; the keys file is never overwritten: name a new file (nothing was written)`,
      );
    }
    throw new KeyStoreError(`cannot create --keys-out ${path}${code === undefined ? '' : ` (${code})`}`);
  }
  return {
    description: path,
    async write(lines) {
      if (lines.length === 0) return;
      await handle.write(lines.map((line) => `${line}\n`).join(''));
      await handle.sync();
    },
    async close(stored) {
      await handle.close();
      if (stored === 0) await unlink(path).catch(() => undefined);
    },
  };
}

export function streamKeySink(stream: { write(text: string): unknown }): KeySink {
  return {
    description: 'standard output',
    write(lines) {
      if (lines.length > 0) stream.write(lines.map((line) => `${line}\n`).join(''));
      return Promise.resolve();
    },
    close: () => Promise.resolve(),
  };
}
