import { createHash, randomUUID } from 'node:crypto';
import { link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { errorCode } from '../../shared/errors';
import { KeyStoreError, type KeyStore, type ReplaceOutcome, type Snapshot } from './key-store';

/** The version of a file that does not exist yet. */
export const ABSENT_VERSION = 'absent';

export interface FileStoreOptions {
  /** A lock file older than this was left by a writer that died; it may be broken. Default 30 s. */
  readonly staleLockMs?: number;
  /** How long to wait for another writer's lock before giving up. Default 10 s. */
  readonly lockWaitMs?: number;
  /** How messages name the file; default `key file <path>`. */
  readonly description?: string;
}

function versionOf(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** Creates `path` with `text`, mode 0600, never over an existing file (EEXIST); synced unless asked not to. */
export async function createNewFile(path: string, text: string, options = { sync: true }): Promise<void> {
  const handle = await open(path, 'wx', 0o600);
  try {
    await handle.writeFile(text, 'utf8');
    if (options.sync) await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * The local server's key file (same format as the secret), edited with compare-before-replace: under an
 * exclusive lock file, the file is read again and compared with what the edit was based on; only if it is
 * unchanged is the new text written to a temporary file in the same directory and renamed over it. Rename is
 * atomic, so the server (which re-reads the file within its cache TTL) sees the old or the new text, never half.
 */
export class FileStore implements KeyStore {
  readonly description: string;
  private readonly lockPath: string;
  private readonly staleLockMs: number;
  private readonly lockWaitMs: number;

  constructor(
    private readonly path: string,
    options: FileStoreOptions = {},
  ) {
    this.description = options.description ?? `key file ${path}`;
    this.lockPath = `${path}.lock`;
    this.staleLockMs = options.staleLockMs ?? 30_000;
    this.lockWaitMs = options.lockWaitMs ?? 10_000;
  }

  async read(): Promise<Snapshot> {
    try {
      const text = await readFile(this.path, 'utf8');
      return { text, version: versionOf(text) };
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return { text: undefined, version: ABSENT_VERSION };
      throw this.failure('cannot read', error);
    }
  }

  async replace(expectedVersion: string, newText: string): Promise<ReplaceOutcome> {
    if (expectedVersion === ABSENT_VERSION) await this.createDirectory();
    const release = await this.lock();
    try {
      const current = await this.read();
      if (current.version !== expectedVersion) return { status: 'conflict', warnings: [] };
      await this.writeAtomically(newText);
      return { status: 'replaced', warnings: [] };
    } finally {
      await release();
    }
  }

  private async createDirectory(): Promise<void> {
    try {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw this.failure('cannot create the directory of', error);
    }
  }

  private async writeAtomically(text: string): Promise<void> {
    const temporary = join(dirname(this.path), `.${basename(this.path)}.${randomUUID()}.tmp`);
    try {
      await createNewFile(temporary, text);
      await rename(temporary, this.path);
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw this.failure('cannot write', error);
    }
  }

  /** Takes `<file>.lock` (created exclusively); returns the function that gives it back. */
  private async lock(): Promise<() => Promise<void>> {
    const owner = `${process.pid} ${randomUUID()}`;
    const deadline = Date.now() + this.lockWaitMs;
    for (let wait = 10; ; wait = Math.min(wait * 2, 200)) {
      try {
        await createNewFile(this.lockPath, owner, { sync: false });
        return () => this.unlock(owner);
      } catch (error) {
        if (errorCode(error) !== 'EEXIST') throw this.failure('cannot create the lock for', error);
      }
      if (await this.breakStaleLock()) continue;
      if (Date.now() > deadline) {
        throw new KeyStoreError(
          `${this.description} is locked by another writer (${this.lockPath}); ` +
            'if no other keys command is running, delete the lock file',
        );
      }
      await sleep(wait / 2 + Math.random() * wait);
    }
  }

  /**
   * Breaks the lock if it is stale; true when the lock may be tried again at once. Stat-then-unlink would race:
   * of two writers that both saw the stale lock, the slower could delete the fresh lock the faster has taken
   * since. So the lock is renamed to a name of our own, which only one writer can do to one file, and what was
   * renamed is looked at again: a fresh lock (the stale one was broken and retaken between our stat and our
   * rename) is linked back, which never replaces a lock taken since, and we wait as for any held lock.
   */
  private async breakStaleLock(): Promise<boolean> {
    const age = await this.ageOf(this.lockPath);
    if (age === undefined) return true; // released meanwhile
    if (age < this.staleLockMs) return false;
    const claimed = `${this.lockPath}.stale-${randomUUID()}`;
    try {
      await rename(this.lockPath, claimed);
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return false; // another writer broke it first: contention
      throw this.failure('cannot break the stale lock of', error);
    }
    const claimedAge = await this.ageOf(claimed);
    const fresh = claimedAge !== undefined && claimedAge < this.staleLockMs;
    if (fresh) await link(claimed, this.lockPath).catch(() => undefined);
    await unlink(claimed).catch(() => undefined);
    return !fresh;
  }

  /** Milliseconds since the file was last written, or undefined when it does not exist. */
  private async ageOf(path: string): Promise<number | undefined> {
    try {
      return Date.now() - (await stat(path)).mtimeMs;
    } catch (error) {
      if (errorCode(error) === 'ENOENT') return undefined;
      throw this.failure('cannot inspect the lock of', error);
    }
  }

  /** Removes the lock only if it is still ours (a stale-lock breaker may have replaced it). */
  private async unlock(owner: string): Promise<void> {
    try {
      if ((await readFile(this.lockPath, 'utf8')) === owner) await unlink(this.lockPath);
    } catch {
      // Already gone: nothing to give back.
    }
  }

  private failure(action: string, error: unknown): KeyStoreError {
    const code = errorCode(error);
    return new KeyStoreError(`${action} ${this.description}${code === undefined ? '' : ` (${code})`}`);
  }
}
