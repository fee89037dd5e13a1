import { errorCode, errorName } from '../../shared/errors';
import { describeError, type Logger } from '../../shared/logger';
import { raceWithTimeout } from '../../shared/timeout';
import {
  MalformedSecretError,
  parseKeyring,
  type Keyring,
  type KeyringProblem,
} from '../../shared/keys/keyring';
import type { BuiltEntries } from '../../shared/keys/built-entries';
import { parseKeyringLazily } from '../../shared/keys/lazy-keyring';
import { secretSize, type SecretSize } from '../../shared/keys/secret-size';
import { FetchBudget, type FetchTicket } from './fetch-budget';

/** Where the secret's text comes from: Secrets Manager in AWS, a JSON file for the local server. */
export interface SecretSource {
  /** Names the source in logs (an ARN or a path), never its content. */
  readonly description: string;
  /** The longest one fetch can take before it settles (its client's deadline), when the source knows it. */
  readonly deadlineMs?: number;
  fetchSecretString(): Promise<string>;
}

/** The keyring a request is checked against. */
export interface CurrentKeys {
  readonly keyring: Keyring;
  /** Past its TTL: served because a refresh has not succeeded (yet), within the staleness bound. */
  readonly stale: boolean;
}

/**
 * What the handler needs: the keys to check the app's request against, or KeysUnavailableError. With one secret
 * the app id changes nothing (a KeyCache ignores it); with several, it says which shard to read (ShardedKeys).
 */
export interface KeyringProvider {
  getKeys(appId: string): Promise<CurrentKeys>;
}

/** The keys served, with the window in which Secrets Manager read them (for comparing two shards' copies). */
export interface KeysRead extends CurrentKeys {
  /** The copy is no older than this: its fetch started then (epoch ms). */
  readonly readNotBefore: number;
  /** ... and no newer than this: its fetch ended then. */
  readonly readNotAfter: number;
}

/**
 * How a loaded secret becomes a keyring: `eager` builds every app's entry at load (one secret: a malformed entry is
 * logged as soon as the secret loads); `lazy` only parses the JSON and builds an entry when a request first asks
 * for its app (several shards: a cold start pays for one entry, not a shard's worth; see lazy-keyring.ts).
 */
export type EntryBuilding = 'eager' | 'lazy';

/** What a successful refresh loaded: the keyring, and the size of the text it came from (never the text). */
export interface RefreshedKeys {
  readonly keyring: Keyring;
  readonly secretSize: SecretSize;
}

/** Told of every refresh attempt's outcome (metrics); must not throw. */
export interface RefreshObserver {
  refreshSucceeded(refreshed: RefreshedKeys): void;
  refreshFailed(): void;
}

/** No keyring can be used: never loaded, or the last good one is older than the staleness bound. */
export class KeysUnavailableError extends Error {
  override readonly name = 'KeysUnavailableError';
}

export interface KeyCacheOptions {
  readonly source: SecretSource;
  readonly logger: Logger;
  /** The shard this cache holds, in a registry of several: added to each of its log lines. */
  readonly shard?: number;
  /** Default 'eager'. */
  readonly entryBuilding?: EntryBuilding;
  /** Where a lazily built keyring keeps its entries, bounded by count (shared by every shard of an environment). */
  readonly builtEntries?: BuiltEntries;
  /** How long a loaded keyring is used before the source is asked again. */
  readonly ttlMs: number;
  /** How long past its TTL a keyring may still be served while refreshes fail. */
  readonly maxStaleMs: number;
  /** While stale keys are usable, how long a request waits for a due refresh before it is served them. */
  readonly refreshWaitMs?: number;
  /** While stale keys are usable, the least time between the starts of two refresh attempts after a failure. */
  readonly staleRetryMs?: number;
  /** With nothing usable, the least time between the starts of two fetches after a failure. */
  readonly unavailableRetryMs?: number;
  /**
   * After the source answered that the secret does not exist (a deleted shard), the least time between the starts of
   * two fetches: a secret that is gone is asked for again once per TTL, as a healthy one is, not twice a second.
   * Default: the TTL.
   */
  readonly missingRetryMs?: number;
  /**
   * Spaces fetch starts while Secrets Manager seems to fail, shared by every shard of one environment
   * (fetch-budget.ts). Default: a budget of this cache's own.
   */
  readonly budget?: FetchBudget;
  readonly observer?: RefreshObserver;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

export const KEY_CACHE_DEFAULTS = {
  refreshWaitMs: 250,
  staleRetryMs: 5_000,
  unavailableRetryMs: 500,
  /** For a source that states no deadline (the key file). */
  fetchDeadlineMs: 10_000,
} as const;

/**
 * A fetch that outlives its source's deadline by this much never settled in real time: the execution environment
 * was frozen between invocations (Lambda) while it ran. It is abandoned rather than waited on.
 */
const FROZEN_FETCH_GRACE_MS = 1_000;

/**
 * A keyring and when it was read. Its age counts from the start of its fetch, not the end: Secrets Manager read the
 * secret somewhere in between, so a keyring younger than the TTL by this clock reflects the secret as it was less
 * than a TTL ago, however long the fetch took (a fetch frozen with its environment included). A reshard relies on
 * that: once it has waited a TTL after copying an app to its new shard, every fresh copy of that shard holds it.
 */
interface Loaded {
  readonly keyring: Keyring;
  readonly readNotBefore: number;
  readonly readNotAfter: number;
}

interface Fetch {
  readonly startedAt: number;
  /** The new keys, or undefined when the fetch failed. Never rejects. */
  readonly result: Promise<Loaded | undefined>;
}

const NEVER_LOADED = 'keys have never loaded';
const TOO_STALE = 'keys are older than the staleness bound and cannot be refreshed';

const NO_OBSERVER: RefreshObserver = {
  refreshSucceeded: () => undefined,
  refreshFailed: () => undefined,
};

/**
 * Caches the parsed keyring of one secret (one shard of the registry) at module scope of the Lambda (or the local
 * server's process). Its age counts from the start of the fetch that read it.
 *
 * - Fresh (younger than the TTL): served from memory.
 * - Due, with the last good keyring still within TTL + maxStale: a refresh starts (one in flight at a time) and
 *   the request waits for it at most `refreshWaitMs` from the refresh's start, then is served the stale keyring.
 *   A slow or failing Secrets Manager never stalls requests while usable keys exist; a healthy one answers well
 *   within the wait, so a change to the secret still takes effect at the TTL.
 * - Nothing usable (never loaded, or past the staleness bound): the request waits for a fetch, the one in flight
 *   or a new one, and gets 503 (KeysUnavailableError) only if that fetch fails.
 * - After a failed fetch the next one starts no sooner than `unavailableRetryMs` (nothing usable: recover fast)
 *   or `staleRetryMs` (stale keys are being served: no hurry) after the failed one started, so the call rate in
 *   an outage stays bounded: one fetch in flight, at most 1000 / unavailableRetryMs fetches a second.
 *
 * A malformed secret counts as a failed fetch, so a bad edit never opens the door and never locks clients out while
 * a good copy is still within bounds.
 */
export class KeyCache implements KeyringProvider {
  private readonly source: SecretSource;
  private readonly logger: Logger;
  /** `{ shard: n }` on every line this cache logs, or nothing when built without a shard (tests, the local server). */
  private readonly shardField: { readonly shard?: number };
  private readonly entryBuilding: EntryBuilding;
  private readonly builtEntries: BuiltEntries | undefined;
  private readonly observer: RefreshObserver;
  private readonly ttlMs: number;
  private readonly maxStaleMs: number;
  private readonly refreshWaitMs: number;
  private readonly staleRetryMs: number;
  private readonly unavailableRetryMs: number;
  private readonly missingRetryMs: number;
  private readonly budget: FetchBudget;
  private readonly abandonAfterMs: number;
  private readonly now: () => number;

  private loaded: Loaded | undefined;
  private inFlight: Fetch | undefined;
  /** A read asked for by reload(): requests wait for it, whatever the keys they would otherwise be served. */
  private reloading: Fetch | undefined;
  /** When the last fetch that failed had started; cleared by a success. */
  private lastFailedStart: number | undefined;
  /** The last fetch failed because the secret does not exist. */
  private lastFailureMissing = false;

  constructor(options: KeyCacheOptions) {
    this.source = options.source;
    this.logger = options.logger;
    this.shardField = options.shard === undefined ? {} : { shard: options.shard };
    this.entryBuilding = options.entryBuilding ?? 'eager';
    this.builtEntries = options.builtEntries;
    this.observer = options.observer ?? NO_OBSERVER;
    this.ttlMs = options.ttlMs;
    this.maxStaleMs = options.maxStaleMs;
    this.refreshWaitMs = options.refreshWaitMs ?? KEY_CACHE_DEFAULTS.refreshWaitMs;
    this.staleRetryMs = options.staleRetryMs ?? KEY_CACHE_DEFAULTS.staleRetryMs;
    this.unavailableRetryMs = options.unavailableRetryMs ?? KEY_CACHE_DEFAULTS.unavailableRetryMs;
    this.missingRetryMs = options.missingRetryMs ?? options.ttlMs;
    this.abandonAfterMs =
      (options.source.deadlineMs ?? KEY_CACHE_DEFAULTS.fetchDeadlineMs) + FROZEN_FETCH_GRACE_MS;
    this.now = options.now ?? Date.now;
    this.budget = options.budget ?? new FetchBudget({ now: this.now });
  }

  /** Starts loading without waiting (Lambda init). A failure is logged; the first request sees its outcome. */
  warm(): void {
    this.fetchNowIfAllowed();
  }

  /**
   * Reads the source again now, for a caller that knows it changed (the local server watching its key file): requests
   * wait for this read rather than being served the keys it replaces. If it fails, the keys held are served as
   * before, and the failure is logged as any refresh's.
   */
  reload(): void {
    this.reloading = this.startFetch(this.now(), this.budget.start(this.abandonAfterMs));
  }

  async getKeys(): Promise<CurrentKeys> {
    const { keyring, stale } = await this.read();
    return { keyring, stale };
  }

  /** getKeys, with when the keys served were read. */
  async read(): Promise<KeysRead> {
    // A second reload while one is awaited replaces it: wait for the newest.
    for (let reload = this.reloading; reload !== undefined; reload = this.reloading) {
      await reload.result;
      if (this.reloading === reload) this.reloading = undefined;
    }
    const fresh = this.freshLoad();
    if (fresh) return served(fresh, false);

    if (this.staleLoad() !== undefined) return this.preferFresh(this.fetchNowIfAllowed());
    return this.awaitFetch(await this.fetchWhenAllowed());
  }

  /**
   * The newest keys this cache can get by the rules: it waits for the fetch in flight (to its end, within the fetch's
   * deadline); with none in flight and its copy past the TTL, it starts one, as a request would, and waits for it.
   * Undefined when nothing usable remains. For a lookup that must not refuse an app missing from stale keys while
   * newer keys are on their way (ShardedKeys during a reshard); it never fetches more often than requests would.
   */
  async newest(): Promise<KeysRead | undefined> {
    const fetch = this.freshLoad() === undefined ? await this.fetchWhenAllowed() : this.inFlight;
    const remainingMs = fetch ? fetch.startedAt + this.abandonAfterMs - this.now() : 0;
    if (fetch && remainingMs > 0) await raceWithTimeout(fetch.result, remainingMs, () => undefined);
    const usable = this.staleLoad();
    return usable && served(usable, this.freshLoad() === undefined);
  }

  /** Stale keys are usable: wait for the refresh only within its budget. */
  private async preferFresh(fetch: Fetch | undefined): Promise<KeysRead> {
    if (fetch) {
      const waitMs = fetch.startedAt + this.refreshWaitMs - this.now();
      const refreshed = waitMs > 0 ? await raceWithTimeout(fetch.result, waitMs, () => undefined) : undefined;
      if (refreshed) return served(refreshed, false);
    }
    const fresh = this.freshLoad();
    if (fresh) return served(fresh, false);
    const stale = this.staleLoad();
    if (stale) return served(stale, true);
    // The staleness bound passed while this request waited.
    return this.awaitFetch(await this.fetchWhenAllowed());
  }

  /** Nothing usable: the outcome of a fetch decides. */
  private async awaitFetch(fetch: Fetch | undefined): Promise<KeysRead> {
    const loaded = fetch ? await fetch.result : undefined;
    if (loaded) return served(loaded, false);
    throw new KeysUnavailableError(this.loaded ? TOO_STALE : NEVER_LOADED);
  }

  private freshLoad(): Loaded | undefined {
    const loaded = this.loaded;
    return loaded && this.now() - loaded.readNotBefore < this.ttlMs ? loaded : undefined;
  }

  private staleLoad(): Loaded | undefined {
    const loaded = this.loaded;
    if (loaded === undefined) return undefined;
    return this.now() - loaded.readNotBefore < this.ttlMs + this.maxStaleMs ? loaded : undefined;
  }

  /** The fetch in flight, else a new one unless this shard's last failure or the environment's budget says wait. */
  private fetchNowIfAllowed(): Fetch | undefined {
    const decision = this.fetchDecision();
    return 'fetch' in decision ? decision.fetch : undefined;
  }

  /**
   * As fetchNowIfAllowed, for a caller with nothing usable to serve meanwhile: when only the environment's budget
   * says wait (another shard's fetch started less than 500 ms ago while Secrets Manager seems to fail), it waits its
   * turn, within the time a fetch may take, rather than answer 503 for a fault this shard has not met. This shard's
   * own spacing after its own failure still answers at once, as before.
   */
  private async fetchWhenAllowed(): Promise<Fetch | undefined> {
    const giveUpAt = this.now() + this.abandonAfterMs;
    for (;;) {
      const decision = this.fetchDecision();
      if ('fetch' in decision) return decision.fetch;
      if (decision.budgetWaitMs === undefined || this.now() + decision.budgetWaitMs > giveUpAt)
        return undefined;
      await new Promise((resolve) => setTimeout(resolve, decision.budgetWaitMs));
    }
  }

  private fetchDecision(): { readonly fetch: Fetch } | { readonly budgetWaitMs?: number } {
    const now = this.now();
    if (this.inFlight && now - this.inFlight.startedAt <= this.abandonAfterMs)
      return { fetch: this.inFlight };
    if (this.lastFailedStart !== undefined && now - this.lastFailedStart < this.retrySpacing()) return {};
    const budgetWaitMs = this.budget.waitMs();
    if (budgetWaitMs > 0) return { budgetWaitMs };
    return { fetch: this.startFetch(now, this.budget.start(this.abandonAfterMs)) };
  }

  private retrySpacing(): number {
    if (this.lastFailureMissing) return Math.max(this.missingRetryMs, this.unavailableRetryMs);
    return this.staleLoad() === undefined ? this.unavailableRetryMs : this.staleRetryMs;
  }

  private startFetch(startedAt: number, ticket: FetchTicket): Fetch {
    const fetch: Fetch = {
      startedAt,
      result: this.load(startedAt).then(
        (keyring) => {
          ticket.settled(true);
          // A fetch abandoned for a newer one must not install older keys over the newer fetch's.
          if (this.inFlight !== fetch) return undefined;
          const loaded: Loaded = { keyring, readNotBefore: startedAt, readNotAfter: this.now() };
          this.loaded = loaded;
          this.lastFailedStart = undefined;
          this.lastFailureMissing = false;
          this.inFlight = undefined;
          return loaded;
        },
        (error: unknown) => {
          ticket.settled(false);
          if (this.inFlight !== fetch) return undefined;
          this.lastFailedStart = startedAt;
          this.lastFailureMissing = isMissingSecret(error);
          this.inFlight = undefined;
          return undefined;
        },
      ),
    };
    this.inFlight = fetch;
    return fetch;
  }

  /** One fetch and parse, logged and reported to the observer. Rejects on any failure. */
  private async load(startedAt: number): Promise<Keyring> {
    try {
      const text = await this.source.fetchSecretString();
      const { keyring, problems, counted } = this.parse(text);
      const size = secretSize(text);
      this.logMalformedEntries(problems);
      this.observer.refreshSucceeded({ keyring, secretSize: size });
      this.logger.info('keys loaded', {
        ...this.shardField,
        source: this.source.description,
        ...counted,
        secretBytes: size.bytes,
        durationMs: this.now() - startedAt,
      });
      return keyring;
    } catch (error) {
      // A secret refused because every entry is malformed says which entries and why, as a partial one does.
      if (error instanceof MalformedSecretError) this.logMalformedEntries(error.problems);
      this.observer.refreshFailed();
      const loaded = this.loaded;
      this.logger.error('keys refresh failed', {
        ...this.shardField,
        source: this.source.description,
        error: describeError(error),
        durationMs: this.now() - startedAt,
        servingStaleKeys: this.staleLoad() !== undefined,
        staleKeysAgeSeconds: loaded ? Math.round((this.now() - loaded.readNotBefore) / 1000) : undefined,
      });
      throw error;
    }
  }

  /** The keyring and what its load log line counts: usable apps when built whole, members when built lazily. */
  private parse(text: string): {
    readonly keyring: Keyring;
    readonly problems: readonly KeyringProblem[];
    readonly counted: { readonly apps: number } | { readonly entries: number };
  } {
    if (this.entryBuilding === 'eager') {
      const { keyring, problems } = parseKeyring(text);
      return { keyring, problems, counted: { apps: keyring.size } };
    }
    const { keyring, problems, entries } = parseKeyringLazily(text, {
      onProblems: (later) => {
        this.logMalformedEntries(later);
      },
      ...(this.builtEntries === undefined ? {} : { builtEntries: this.builtEntries }),
    });
    return { keyring, problems, counted: { entries } };
  }

  /** By position only, never the app id: whatever it looks like, it may be a key pasted in the wrong place. */
  private logMalformedEntries(problems: readonly KeyringProblem[]): void {
    for (const problem of problems) {
      this.logger.error('malformed key entry ignored', {
        ...this.shardField,
        entryPosition: problem.entryPosition,
        keyPosition: problem.keyPosition,
        reason: problem.reason,
      });
    }
  }
}

/** The source says the secret is not there (a deleted shard secret, a shard file removed): no use asking soon. */
function isMissingSecret(error: unknown): boolean {
  return errorName(error) === 'ResourceNotFoundException' || errorCode(error) === 'ENOENT';
}

function served(loaded: Loaded, stale: boolean): KeysRead {
  return {
    keyring: loaded.keyring,
    stale,
    readNotBefore: loaded.readNotBefore,
    readNotAfter: loaded.readNotAfter,
  };
}
