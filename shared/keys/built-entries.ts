import type { KeyringApp } from './keyring';

/**
 * The entries a lazily built keyring (lazy-keyring.ts) has built, bounded by count across every keyring of one
 * execution environment: the Lambda's memory must not grow with the number of distinct apps its requests name.
 *
 * A built entry (digests, key ids, an allowlist) took about 1.7 KB when allowlists were node BlockLists; kept for
 * every app asked for within a TTL, 100,000 distinct apps took an environment of 256 MB to 337 MB. Here they live in
 * two generations: new entries go into the current one; when it holds `generationSize`, it becomes the previous one
 * and the one before is dropped. An entry found in the previous generation moves to the current one, so an app asked
 * for at least once per generation is never rebuilt, and a hot app costs one more map lookup than before at most.
 * At most 2 x `generationSize` entries are alive at once (a least-recently-used bound within a factor of two, without
 * reordering a list on every hit).
 *
 * Keyed weakly by the keyring that built them: a keyring replaced by a refresh, and the values it holds, can
 * be collected at once, whatever entries of it are still counted here.
 */
export class BuiltEntries {
  private current = new WeakMap<object, Map<string, KeyringApp | null>>();
  private previous = new WeakMap<object, Map<string, KeyringApp | null>>();
  private inCurrent = 0;
  private inPrevious = 0;

  constructor(readonly generationSize: number = BUILT_ENTRIES_PER_GENERATION) {
    if (!Number.isInteger(generationSize) || generationSize < 1) {
      throw new Error(`generationSize must be a positive integer, got ${generationSize}`);
    }
  }

  /** How many entries are kept: at most 2 x generationSize (those of a keyring since collected included). */
  get kept(): number {
    return this.inCurrent + this.inPrevious;
  }

  /** The entry `keyring` built for `appId`: an app, null when its entry cannot be served, undefined if not kept. */
  get(keyring: object, appId: string): KeyringApp | null | undefined {
    const hit = this.current.get(keyring)?.get(appId);
    if (hit !== undefined) return hit;
    const older = this.previous.get(keyring)?.get(appId);
    if (older !== undefined) this.set(keyring, appId, older);
    return older;
  }

  set(keyring: object, appId: string, entry: KeyringApp | null): void {
    if (this.inCurrent >= this.generationSize) {
      this.previous = this.current;
      this.inPrevious = this.inCurrent;
      this.current = new WeakMap();
      this.inCurrent = 0;
    }
    let entries = this.current.get(keyring);
    if (entries === undefined) {
      entries = new Map();
      this.current.set(keyring, entries);
    }
    if (!entries.has(appId)) this.inCurrent++;
    entries.set(appId, entry);
  }
}

/**
 * 5,000 entries a generation: at most 10,000 built entries alive, about 5.5 MB with two d: digests each (550 bytes
 * an entry, measured in-process). An environment whose requests name fewer distinct apps than that between two
 * turns of a generation never rebuilds one.
 */
export const BUILT_ENTRIES_PER_GENERATION = 5_000;
