import type { Logger } from '../../shared/logger';
import { layoutProblem, shardSlots, shardsToSearch, type RegistryLayout } from '../../shared/keys/registry';
import {
  KeyCache,
  KeysUnavailableError,
  type CurrentKeys,
  type EntryBuilding,
  type KeyCacheOptions,
  type KeyringProvider,
  type KeysRead,
  type RefreshObserver,
  type SecretSource,
} from './key-cache';
import { FetchBudget } from './fetch-budget';
import { BuiltEntries } from '../../shared/keys/built-entries';

/** Where shard `index` of a registry is read from, given its id in the layout (a secret's ARN or name, a path). */
export type ShardSourceFor = (index: number, id: string) => SecretSource;

export interface ShardedKeysOptions {
  readonly layout: RegistryLayout;
  readonly sourceFor: ShardSourceFor;
  readonly logger: Logger;
  /** Each shard's cache TTL and staleness bound: today's rules, per shard. */
  readonly ttlMs: number;
  readonly maxStaleMs: number;
  /** Told of every shard's refreshes. */
  readonly observer?: RefreshObserver;
  /** Default: 'eager' for a registry of one secret (as before shards), 'lazy' for several. */
  readonly entryBuilding?: EntryBuilding;
  /** Where lazily built entries are kept, across all shards. Default: a BuiltEntries of BUILT_ENTRIES_PER_GENERATION. */
  readonly builtEntries?: BuiltEntries;
  /** The rest of each shard cache's options (tests). */
  readonly cacheOptions?: Pick<
    KeyCacheOptions,
    'refreshWaitMs' | 'staleRetryMs' | 'unavailableRetryMs' | 'now'
  >;
}

/** One shard's keys as a lookup met them: read, or not readable at all. */
type ShardOutcome =
  | { readonly index: number; readonly keys: KeysRead }
  | { readonly index: number; readonly unavailable: KeysUnavailableError };

/**
 * The keys of a registry of one or more shard secrets, for the payment handler: one KeyCache per shard, each
 * created when a request first needs its shard, each with today's rules (TTL, stale keys within the bound, one
 * fetch in flight, spaced retries, bounded calls). With one shard it is today's single cache, exactly.
 *
 * A request for app A reads shardsToSearch(layout, A): its home, then, while a reshard is under way, its home
 * before. The first keyring that holds A decides. When none does (the fallback rule, docs/keys.md):
 * - With one shard to search, that shard's keyring decides, as with one secret: 401 as an unknown app, judged in
 *   constant time against it; 503 if it cannot be read.
 * - During a reshard, a refusal must not rest on a new-home copy older than A's move. The reshard copies A to its
 *   new home, waits at least a TTL, then removes the old copy; so A is refused (401, judged against the new home's
 *   keyring) only on a new-home copy read less than a TTL ago, or read after the previous home's copy. An older
 *   one (stale, served after the 250 ms wait while a slow refresh goes on) is not enough: the request waits for
 *   that refresh to end, and if it too predates the previous home's copy, for one more (a refresh the rules allow
 *   anyway: the copy is past its TTL). If no such copy can be read, 503: never a 401 a moved app may not deserve.
 * A shard that cannot be read (never loaded, or past the staleness bound) does not end the search: the app may be
 * in the other one. When it decides, its 503 names the shard.
 */
export class ShardedKeys implements KeyringProvider {
  private readonly layout: RegistryLayout;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly caches: (KeyCache | undefined)[];
  private readonly createCache: (index: number) => KeyCache;

  constructor(options: ShardedKeysOptions) {
    const { layout, sourceFor, cacheOptions, ...rules } = options;
    const problem = layoutProblem(layout);
    if (problem !== undefined) throw new Error(`key registry: ${problem}`);
    const slots = shardSlots(layout);
    this.layout = layout;
    this.ttlMs = options.ttlMs;
    this.now = cacheOptions?.now ?? Date.now;
    this.caches = new Array<KeyCache | undefined>(slots);
    const entryBuilding = options.entryBuilding ?? (slots === 1 ? 'eager' : 'lazy');
    // One budget for every shard: while Secrets Manager fails, 4 calls a second per environment, not per shard.
    const budget = new FetchBudget({ now: this.now });
    // One bound on built entries for every shard: memory does not grow with the distinct apps asked for.
    const builtEntries = options.builtEntries ?? new BuiltEntries();
    this.createCache = (index) =>
      new KeyCache({
        ...cacheOptions,
        ...rules,
        entryBuilding,
        budget,
        builtEntries,
        // One secret logs as it did before shards; with several, each line says which shard.
        ...(slots === 1 ? {} : { shard: index }),
        source: sourceFor(index, layout.shardIds[index] ?? ''),
      });
  }

  /**
   * Lambda init: with one shard, starts fetching it now so the fetch overlaps the rest of the cold start (as before
   * shards). With several, nothing: which shard the first request needs is known only when it comes, and a cold
   * environment fetches exactly that one.
   */
  warm(): void {
    if (this.caches.length === 1) this.cache(0).warm();
  }

  /**
   * Reads shard `index` again now, for a caller that knows it changed (the local server watching its shard files):
   * requests for it wait for this read, as KeyCache.reload() makes them. A shard no request has needed yet is read
   * when one does, so there is nothing to do for it.
   */
  reload(index: number): void {
    this.caches[index]?.reload();
  }

  async getKeys(appId: string): Promise<CurrentKeys> {
    const [home = 0, previous] = shardsToSearch(this.layout, appId);
    if (previous === undefined) return this.current(await this.settle(home));

    const atHome = await this.settle(home);
    if (holds(atHome, appId)) return this.current(atHome);
    const atPrevious = await this.settle(previous);
    if (holds(atPrevious, appId)) return this.current(atPrevious);
    return this.current(await this.decideUnfound(appId, atHome, atPrevious));
  }

  /** A and its two shards during a reshard, neither copy holding A: refuse only on copies that cannot predate a move. */
  private async decideUnfound(
    appId: string,
    atHome: ShardOutcome,
    atPrevious: ShardOutcome,
  ): Promise<ShardOutcome> {
    // The app may be in a shard that cannot be read: 503, never a 401 it may not deserve.
    if ('unavailable' in atPrevious) return atPrevious;
    if ('unavailable' in atHome) return atHome;
    const previous = atPrevious.keys;
    // Up to two newer copies: the refresh in flight may have started before the app was copied; one started after
    // the previous home's copy was read cannot have.
    let home: KeysRead | undefined = atHome.keys;
    for (let round = 0; home !== undefined; round++) {
      if (home.keyring.has(appId) || this.mayRefuse(home, previous))
        return { index: atHome.index, keys: home };
      if (round === 2) break;
      home = await this.cache(atHome.index).newest();
    }
    return {
      index: atHome.index,
      unavailable: new KeysUnavailableError(
        `keys are older than those of shard ${atPrevious.index} and cannot be refreshed`,
      ),
    };
  }

  /**
   * Whether the new home's copy is new enough to say an app is not there. The reshard copies an app to its new home
   * and waits at least a TTL before it removes the old copy; so the new home's copy holds every moved app the
   * previous home's copy lacks when it was read less than a TTL ago (a fresh copy), or after the previous home's.
   */
  private mayRefuse(home: KeysRead, previous: KeysRead): boolean {
    return this.now() - home.readNotBefore < this.ttlMs || home.readNotBefore >= previous.readNotAfter;
  }

  /** The keys of a shard, or why there are none; any other error is not a shard's state and propagates. */
  private async settle(index: number): Promise<ShardOutcome> {
    try {
      return { index, keys: await this.cache(index).read() };
    } catch (error) {
      if (error instanceof KeysUnavailableError) return { index, unavailable: error };
      throw error;
    }
  }

  /** What the handler is given: the keys, or the shard's unavailability, named by shard when there are several. */
  private current(outcome: ShardOutcome): CurrentKeys {
    if ('unavailable' in outcome) {
      const { message } = outcome.unavailable;
      throw this.caches.length === 1
        ? outcome.unavailable
        : new KeysUnavailableError(`shard ${outcome.index}: ${message}`);
    }
    return { keyring: outcome.keys.keyring, stale: outcome.keys.stale };
  }

  private cache(index: number): KeyCache {
    let cache = this.caches[index];
    if (cache === undefined) {
      cache = this.createCache(index);
      this.caches[index] = cache;
    }
    return cache;
  }
}

function holds(outcome: ShardOutcome, appId: string): boolean {
  return 'keys' in outcome && outcome.keys.keyring.has(appId);
}
