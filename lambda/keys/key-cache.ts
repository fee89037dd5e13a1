import { describeError, type Logger } from '../shared/logger';
import { parseKeyring, type Keyring } from './keyring';

/** Where the secret's text comes from: Secrets Manager in AWS, a JSON file for the local server. */
export interface SecretSource {
  /** Names the source in logs (an ARN or a path), never its content. */
  readonly description: string;
  fetchSecretString(): Promise<string>;
}

/** What the handler needs: the current keyring, or KeysUnavailableError. */
export interface KeyringProvider {
  getKeyring(): Promise<Keyring>;
}

/** No keyring can be used: never loaded, or the last good one is older than the staleness bound. */
export class KeysUnavailableError extends Error {
  override readonly name = 'KeysUnavailableError';
}

export interface KeyCacheOptions {
  readonly source: SecretSource;
  readonly logger: Logger;
  /** How long a loaded keyring is used before the source is asked again. */
  readonly ttlMs: number;
  /** How long past its TTL a keyring may still be served while refreshes fail. */
  readonly maxStaleMs: number;
  /**
   * After a failed refresh, wait this long before trying again, serving the stale keyring meanwhile, so an
   * outage does not make every request wait for a time-out. Default 5 s; at most 1 s while nothing has loaded.
   */
  readonly retryBackoffMs?: number;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

interface Loaded {
  readonly keyring: Keyring;
  readonly loadedAt: number;
}

const DEFAULT_RETRY_BACKOFF_MS = 5_000;
const NEVER_LOADED_RETRY_MS = 1_000;

/**
 * Caches the parsed keyring at module scope of the Lambda (or the local server's process).
 *
 * - Fresh (younger than the TTL): served from memory.
 * - Expired: one refresh runs; concurrent callers share it (one fetch in flight at a time).
 * - Refresh failed: the last good keyring is served until TTL + maxStale after it was loaded, then
 *   KeysUnavailableError. A malformed secret counts as a failed refresh, so a bad edit never opens the door
 *   and never locks clients out while a good copy is still within bounds.
 */
export class KeyCache implements KeyringProvider {
  private readonly source: SecretSource;
  private readonly logger: Logger;
  private readonly ttlMs: number;
  private readonly maxStaleMs: number;
  private readonly retryBackoffMs: number;
  private readonly now: () => number;

  private loaded: Loaded | undefined;
  private inFlight: Promise<Keyring> | undefined;
  private lastFailureAt: number | undefined;

  constructor(options: KeyCacheOptions) {
    this.source = options.source;
    this.logger = options.logger;
    this.ttlMs = options.ttlMs;
    this.maxStaleMs = options.maxStaleMs;
    this.retryBackoffMs = options.retryBackoffMs ?? DEFAULT_RETRY_BACKOFF_MS;
    this.now = options.now ?? Date.now;
  }

  /** Starts loading without waiting (Lambda init). A failure is logged; the first request sees its outcome. */
  warm(): void {
    this.refresh().catch(() => {
      // Already logged by load(); getKeyring() decides what the caller gets.
    });
  }

  async getKeyring(): Promise<Keyring> {
    const loaded = this.loaded;
    if (loaded && this.now() - loaded.loadedAt < this.ttlMs) return loaded.keyring;

    // With nothing to serve, a failure costs a 503 either way: retry sooner, so a cold start that met a passing
    // error recovers within a second rather than after the full back-off.
    const backoffMs = this.loaded
      ? this.retryBackoffMs
      : Math.min(this.retryBackoffMs, NEVER_LOADED_RETRY_MS);
    const backingOff =
      this.inFlight === undefined &&
      this.lastFailureAt !== undefined &&
      this.now() - this.lastFailureAt < backoffMs;
    if (backingOff) return this.staleOrUnavailable();

    try {
      return await this.refresh();
    } catch {
      return this.staleOrUnavailable();
    }
  }

  private refresh(): Promise<Keyring> {
    this.inFlight ??= this.load().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(): Promise<Keyring> {
    const startedAt = this.now();
    try {
      const { keyring, problems } = parseKeyring(await this.source.fetchSecretString());
      for (const problem of problems) {
        this.logger.error('malformed key entry ignored', {
          entryPosition: problem.entryPosition,
          appId: problem.appId,
          keyPosition: problem.keyPosition,
          reason: problem.reason,
        });
      }
      this.loaded = { keyring, loadedAt: this.now() };
      this.lastFailureAt = undefined;
      this.logger.info('keys loaded', {
        source: this.source.description,
        apps: keyring.size,
        durationMs: this.now() - startedAt,
      });
      return keyring;
    } catch (error) {
      this.lastFailureAt = this.now();
      const usable = this.usableStale();
      this.logger.error('keys refresh failed', {
        source: this.source.description,
        error: describeError(error),
        servingStaleKeys: usable !== undefined,
        staleKeysAgeSeconds: this.loaded ? Math.round((this.now() - this.loaded.loadedAt) / 1000) : undefined,
      });
      throw error;
    }
  }

  private usableStale(): Keyring | undefined {
    const loaded = this.loaded;
    if (loaded === undefined) return undefined;
    return this.now() - loaded.loadedAt < this.ttlMs + this.maxStaleMs ? loaded.keyring : undefined;
  }

  private staleOrUnavailable(): Keyring {
    const stale = this.usableStale();
    if (stale) return stale;
    throw new KeysUnavailableError(
      this.loaded
        ? 'keys are older than the staleness bound and cannot be refreshed'
        : 'keys have never loaded',
    );
  }
}
