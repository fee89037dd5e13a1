import { timingSafeEqual } from 'node:crypto';
import type { Keyring, StoredKey } from './keyring';
import { matchDigestOf } from './key-material';

export interface Credentials {
  readonly appId: string;
  readonly appKey: string;
}

/** Why a request was refused. For logs only: every cause gets the same 401 response. */
export type AuthFailureReason = CredentialsFailureReason | 'unknown_app' | 'wrong_key' | KeyRuleFailureReason;

/** The headers themselves do not hold one usable pair of credentials. */
export type CredentialsFailureReason = 'missing_app_id' | 'missing_app_key' | 'duplicate_header';

/** The key matched, but a rule of the app refuses it: it has expired, or the request came from another network. */
export type KeyRuleFailureReason = 'expired_key' | 'source_not_allowed';

export type CredentialsReading =
  | { readonly ok: true; readonly credentials: Credentials }
  | { readonly ok: false; readonly reason: CredentialsFailureReason };

/** What the decision needs to know of the request besides its credentials. */
export interface RequestFacts {
  /** Epoch milliseconds: expiry is checked at each request, not when the keys were loaded. */
  readonly now: number;
  /** The caller's address (API Gateway's `sourceIp`, the local server's socket); undefined when unknown. */
  readonly sourceIp: string | undefined;
}

export type AuthDecision =
  | { readonly ok: true; readonly appId: string; readonly keyId: string }
  | { readonly ok: false; readonly reason: 'unknown_app' | 'wrong_key' }
  /** The app and the key are known here, so the log can say which partner is affected. */
  | {
      readonly ok: false;
      readonly reason: KeyRuleFailureReason;
      readonly appId: string;
      readonly keyId: string;
    };

/**
 * Takes the credentials from the header values as received. A header sent more than once is refused rather
 * than guessed at: proxies disagree on which copy wins.
 */
export function readCredentials(
  appIdValues: readonly string[],
  appKeyValues: readonly string[],
): CredentialsReading {
  if (appIdValues.length > 1 || appKeyValues.length > 1) return { ok: false, reason: 'duplicate_header' };
  const appId = appIdValues[0] ?? '';
  const appKey = appKeyValues[0] ?? '';
  if (appId === '') return { ok: false, reason: 'missing_app_id' };
  if (appKey === '') return { ok: false, reason: 'missing_app_key' };
  return { ok: true, credentials: { appId, appKey } };
}

/** Stands in for a missing key: an unknown app, or an app with fewer keys than the most any app has. */
const DUMMY_KEY: StoredKey = { id: 'dummy', digest: matchDigestOf('payment-api dummy key') };

/** The most keys any app holds, per keyring (computed once: keyrings are immutable and replaced on refresh). */
const comparisonsPerKeyring = new WeakMap<Keyring, number>();

/** A property of the keyring (of the shard, with several), never of the app asked for. */
function comparisonsFor(keyring: Keyring): number {
  if (keyring.comparisonsPerRequest !== undefined) return keyring.comparisonsPerRequest;
  let count = comparisonsPerKeyring.get(keyring);
  if (count === undefined) {
    count = Math.max(1, ...[...keyring.values()].map((app) => app.keys.length));
    comparisonsPerKeyring.set(keyring, count);
  }
  return count;
}

/**
 * Decides whether the presented key is one of the app's keys, still valid at `facts.now`, presented from a network
 * the app allows. Pure: no I/O; the clock and the source come in as facts.
 *
 * The presented key is hashed, then compared with `timingSafeEqual` over equal-length digests (the first 16 bytes of
 * SHA-256, which every stored form holds: plain, `sha256:` or the compact `d:`), the
 * same number of times for every request against a keyring: as many times as its largest app has keys (or, for a
 * keyring built as apps are asked for, its longest key list), padding with a dummy digest, without stopping at a
 * match. So neither the key, nor whether the app exists, nor how many keys it has shows in the timing. With
 * several shards the count is the shard's, which anyone can compute from the app id (shardOf). The app's network
 * rule is checked for every request naming the app, the expiry (one comparison) only for the key that matched:
 * neither depends on the presented key's content.
 */
export function authenticate(credentials: Credentials, keyring: Keyring, facts: RequestFacts): AuthDecision {
  const presented = matchDigestOf(credentials.appKey);
  const app = keyring.get(credentials.appId);
  const candidates = app?.keys ?? [];

  let matched: StoredKey | undefined;
  const comparisons = comparisonsFor(keyring);
  for (let index = 0; index < comparisons; index++) {
    const candidate = candidates[index];
    const equal = timingSafeEqual((candidate ?? DUMMY_KEY).digest, presented);
    if (equal && candidate !== undefined && matched === undefined) matched = candidate;
  }

  // The network is judged for every request that names a fenced app, whether or not its key matched: the check
  // costs microseconds, and run for right keys only it would tell a right key refused for its network from a wrong
  // one by the time the answer takes.
  const sourceAllowed = app?.allowlist === undefined || app.allowlist.allows(facts.sourceIp);

  if (app === undefined) return { ok: false, reason: 'unknown_app' };
  if (matched === undefined) return { ok: false, reason: 'wrong_key' };
  const known = { appId: credentials.appId, keyId: matched.id };
  if (matched.expiresAt !== undefined && matched.expiresAt <= facts.now) {
    return { ok: false, reason: 'expired_key', ...known };
  }
  if (!sourceAllowed) return { ok: false, reason: 'source_not_allowed', ...known };
  return { ok: true, ...known };
}
