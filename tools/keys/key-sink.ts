import { open, unlink, type FileHandle } from 'node:fs/promises';
import { errorCode } from '../../shared/errors';
import type { OutputStream } from '../common/tool-io';
import type { FreshKey } from './changes';
import { KeyStoreError } from './key-store';

/**
 * Where `apply` and `leaked --rotate` hand out the keys they create: a file created with mode 0600 and never
 * overwritten, or standard output. One JSON object a line: {"appId","keyId","key"}, plus "expires" when the key has
 * one. Each shard's keys are written as soon as that shard's write has landed, and every byte is accounted for: a
 * short write is carried on, a failed one (a full disk, a file size limit, a closed pipe) says how many bytes went
 * out, so that KeyHandout can name every app whose stored key did not go out whole.
 */
export interface KeySink {
  /** `keys.jsonl`, or `standard output`. */
  readonly description: string;
  /** Never throws: how many bytes of `text` went out, and why not all (an error code such as EFBIG or EPIPE). */
  send(text: string): Promise<{ readonly written: number; readonly failure?: string }>;
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
    async send(text) {
      const buffer = Buffer.from(text);
      let written = 0;
      try {
        while (written < buffer.length) {
          const { bytesWritten } = await handle.write(buffer, written, buffer.length - written);
          if (bytesWritten === 0) throw Object.assign(new Error('no progress'), { code: 'ENOSPC' });
          written += bytesWritten;
        }
        await handle.sync();
        return { written };
      } catch (error) {
        return { written, failure: errorCode(error) ?? 'write failed' };
      }
    },
    async close(stored) {
      await handle.close().catch(() => undefined);
      if (stored === 0) await unlink(path).catch(() => undefined);
    },
  };
}

/**
 * Standard output. A Node stream's write is confirmed by its callback, and its 'error' (EPIPE when the reader has
 * gone) is caught rather than left to crash the process; what was not confirmed counts as not handed out.
 */
export function streamKeySink(stream: OutputStream): KeySink {
  let failure: string | undefined;
  stream.on?.('error', (error) => {
    failure ??= errorCode(error) ?? 'write failed';
  });
  return {
    description: 'standard output',
    async send(text) {
      if (failure === undefined && stream.on === undefined) stream.write(text);
      else if (failure === undefined) {
        const error = await new Promise<Error | null | undefined>((resolve) => stream.write(text, resolve));
        if (error !== undefined && error !== null) failure ??= errorCode(error) ?? 'write failed';
      }
      return failure === undefined ? { written: Buffer.byteLength(text) } : { written: 0, failure };
    },
    close: () => Promise.resolve(),
  };
}

/** A new key to hand out: its line, and the app and key id that name it should it be lost (never the key). */
export interface NewKey {
  readonly appId: string;
  readonly keyId: string;
  readonly line: string;
}

/** `{"appId","keyId","key"}`, and "expires" when the key has one. */
export function newKey(appId: string, fresh: FreshKey, expires?: string): NewKey {
  const expiry = expires === undefined ? {} : { expires };
  return {
    appId,
    keyId: fresh.keyId,
    line: JSON.stringify({ appId, keyId: fresh.keyId, key: fresh.key, ...expiry }),
  };
}

/** How many of `keys` (each line with its newline) fit whole in the first `bytes` bytes. */
function wholeKeys(keys: readonly NewKey[], bytes: number): number {
  let end = 0;
  for (const [count, key] of keys.entries()) {
    end += Buffer.byteLength(key.line) + 1;
    if (end > bytes) return count;
  }
  return keys.length;
}

/**
 * Hands out each shard's keys, each app's new key once (an app's copies in several shards, as a reshard leaves them,
 * hold the same new key); after a failure, no more is sent, and every later key is counted as not handed out.
 */
export class KeyHandout {
  handedOut = 0;
  failure: string | undefined;
  readonly lost: NewKey[] = [];
  private readonly seen = new Set<string>();

  constructor(private readonly sink: KeySink | undefined) {}

  /** 'stop' once the keys can no longer be handed out: writePlan then starts no further shard. */
  async hand(shardKeys: readonly NewKey[]): Promise<'stop' | undefined> {
    const keys = shardKeys.filter((key) => !this.seen.has(`${key.appId}\0${key.keyId}`));
    for (const key of keys) this.seen.add(`${key.appId}\0${key.keyId}`);
    if (this.failure !== undefined) this.lost.push(...keys);
    else if (keys.length > 0 && this.sink !== undefined) {
      const sent = await this.sink.send(keys.map((key) => `${key.line}\n`).join(''));
      const whole = sent.failure === undefined ? keys.length : wholeKeys(keys, sent.written);
      this.failure = sent.failure;
      this.handedOut += whole;
      this.lost.push(...keys.slice(whole));
    }
    return this.failure === undefined ? undefined : 'stop';
  }

  /** Closes the sink, counting every key stored, handed out or not. */
  close(): Promise<void> {
    return this.sink?.close(this.handedOut + this.lost.length) ?? Promise.resolve();
  }

  /** One line per app whose new key was stored but not handed out: what to run, never the key. */
  lostLines(): string[] {
    const sink = this.sink?.description ?? '';
    return this.lost.map(
      ({ appId, keyId }) =>
        `error: app ${appId}: its new key ${keyId} was stored but not handed out (${sink}: ${this.failure ?? ''}); ` +
        `give it one with "keys rotate ${appId}", then "keys revoke ${appId} ${keyId}"\n`,
    );
  }
}
