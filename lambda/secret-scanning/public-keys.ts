import type { KeyObject } from 'node:crypto';
import { describeError, type Logger } from '../../shared/logger';
import { PUBLIC_KEY_LIMITS } from './settings';
import { parsePublicKeys } from './signature';

/** What the cache says of a key identifier. */
export type KeyLookup =
  | { readonly kind: 'found'; readonly key: KeyObject }
  /** The keys are known, and this identifier is not among them: the request is refused (401). */
  | { readonly kind: 'unknown' }
  /** The keys could not be fetched, so nothing can be verified now (503, GitHub retries). */
  | { readonly kind: 'unavailable'; readonly problem: string };

export interface PublicKeyCacheOptions {
  /** Fetches the public keys document's text; throws when it cannot (fetch-text.ts bounds it). */
  readonly fetchDocument: () => Promise<string>;
  /** Epoch ms. */
  readonly now: () => number;
  readonly logger: Logger;
  readonly limits?: Pick<typeof PUBLIC_KEY_LIMITS, 'minRefreshIntervalMs' | 'maxAgeMs'>;
}

type RefreshOutcome = { readonly ok: true } | { readonly ok: false; readonly problem: string };

/**
 * GitHub's public keys, kept for the life of the execution environment. An identifier not in the cache refreshes it,
 * but at most once per `minRefreshIntervalMs` whatever the outcome, so a flood of made-up identifiers costs one fetch
 * a minute, not one a request. Keys older than `maxAgeMs` are refreshed at the next request that may; if that fails
 * they keep serving (GitHub being down must not stop verification with keys it gave an hour ago).
 */
export class PublicKeyCache {
  private keys = new Map<string, KeyObject>();
  private loadedAt: number | undefined;
  private lastAttemptAt: number | undefined;
  private inFlight: Promise<RefreshOutcome> | undefined;
  private readonly limits: Pick<typeof PUBLIC_KEY_LIMITS, 'minRefreshIntervalMs' | 'maxAgeMs'>;

  constructor(private readonly options: PublicKeyCacheOptions) {
    this.limits = options.limits ?? PUBLIC_KEY_LIMITS;
  }

  /** How many fetches were started: what the tests of the once-a-minute rule count. */
  fetches = 0;

  async lookup(keyIdentifier: string): Promise<KeyLookup> {
    const now = this.options.now();
    const fresh = this.loadedAt !== undefined && now - this.loadedAt < this.limits.maxAgeMs;
    const cached = this.keys.get(keyIdentifier);
    if (cached !== undefined && fresh) return { kind: 'found', key: cached };

    let failure: string | undefined;
    // A lookup that arrives while a refresh is under way waits for it rather than judging by the keys before it.
    if (this.inFlight !== undefined || this.mayRefresh(now)) {
      const outcome = await this.refresh(now);
      if (!outcome.ok) failure = outcome.problem;
    }
    const known = this.keys.get(keyIdentifier);
    if (known !== undefined) return { kind: 'found', key: known };
    if (failure !== undefined) return { kind: 'unavailable', problem: failure };
    if (this.keys.size === 0) {
      return {
        kind: 'unavailable',
        problem: 'no public keys yet: the last fetch failed, the next is not due',
      };
    }
    return { kind: 'unknown' };
  }

  private mayRefresh(now: number): boolean {
    return this.lastAttemptAt === undefined || now - this.lastAttemptAt >= this.limits.minRefreshIntervalMs;
  }

  private refresh(now: number): Promise<RefreshOutcome> {
    this.inFlight ??= this.load(now).finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async load(now: number): Promise<RefreshOutcome> {
    this.lastAttemptAt = now;
    this.fetches += 1;
    let text: string;
    try {
      text = await this.options.fetchDocument();
    } catch (error) {
      const problem = `could not fetch the public keys: ${describeError(error)}`;
      this.options.logger.error('public keys unavailable', { error: problem, cachedKeys: this.keys.size });
      return { ok: false, problem };
    }
    const reading = parsePublicKeys(text);
    if (!reading.ok) {
      this.options.logger.error('public keys unavailable', {
        error: reading.problem,
        cachedKeys: this.keys.size,
      });
      return { ok: false, problem: reading.problem };
    }
    this.keys = new Map(reading.keys.map((entry) => [entry.keyIdentifier, entry.key]));
    this.loadedAt = now;
    this.options.logger.info('public keys loaded', { keys: this.keys.size, skippedKeys: reading.skipped });
    return { ok: true };
  }
}
