import { DIGEST_PREFIX } from './key-material';
import {
  addKey,
  appOf,
  byCodeUnit,
  expiresAtOf,
  isExpired,
  keyIdOf,
  KeyDocumentError,
  type DocumentKey,
  type KeyDocument,
} from './key-document';
import { limitOtherKeysExpiry, pruneExpiredKeys, type PrunedKey } from './key-rules';

/**
 * Scheduled rotation, by date rather than by count. Each rotation gives every app a fresh key and sets each of its
 * other keys to expire `keep - 1` periods later (or earlier, if it already expired earlier). Against cutting all but
 * the `keep` newest keys, as rotation once did:
 * - the previous key's end is a date anyone can read in `list`, and the payment Lambda enforces it to the second;
 * - it ends on time even when the next rotations fail (a count cut only happens when a rotation succeeds);
 * - a key an operator added by hand is superseded like any other, never cut the moment rotation runs.
 * When rotations run on schedule, every key lives about as long as under the count cut, and the app holds `keep`
 * keys after each rotation: expired keys are removed at the next rotation, so the secret cleans itself.
 */

/**
 * At least two keys: the key clients hold now must stay valid for at least one more period after the fresh key
 * arrives, or every client is locked out the moment rotation finishes.
 */
export const MIN_KEYS_KEPT_BY_ROTATION = 2;

/**
 * At most ten: every superseded key costs room in the secret (Secrets Manager holds 65,536 bytes), and an expiry
 * must stay a four-digit year (10 keys at the longest period, 1000 days, is 25 years).
 */
export const MAX_KEYS_KEPT_BY_ROTATION = 10;

export interface RotationPolicy {
  /**
   * Keys valid right after a rotation that ran on schedule, the fresh one included: each key a rotation supersedes
   * stays valid for `keep - 1` more periods.
   */
  readonly keep: number;
  /** Time between two scheduled rotations, in milliseconds: a whole number of hours, as Secrets Manager's. */
  readonly periodMs: number;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

export interface RotatedDocument {
  readonly document: KeyDocument;
  /** Apps that got a fresh key, sorted. */
  readonly rotatedAppIds: readonly string[];
  /** Apps holding a `sha256:` key, left as they were: a digest cannot be handed to a client. Sorted. */
  readonly skippedAppIds: readonly string[];
  /**
   * Apps whose every key had expired, left as they were: a rotation never gives access back to an app that has
   * lost it (an operator may have let it expire on purpose), and never removes an app (`prune` does). Sorted.
   */
  readonly expiredAppIds: readonly string[];
  /** Expired keys removed from the rotated apps, by app (sorted) and position. */
  readonly prunedKeys: readonly PrunedKey[];
  /** The latest instant any superseded key may now expire at (epoch ms, on the hour). */
  readonly supersededKeysExpireBy: number;
}

export function assertValidRotationKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < MIN_KEYS_KEPT_BY_ROTATION || keep > MAX_KEYS_KEPT_BY_ROTATION) {
    throw new KeyDocumentError(
      `keep must be a whole number from ${MIN_KEYS_KEPT_BY_ROTATION} to ${MAX_KEYS_KEPT_BY_ROTATION}`,
    );
  }
}

export function assertValidRotationPolicy(policy: RotationPolicy): void {
  assertValidRotationKeep(policy.keep);
  if (!Number.isSafeInteger(policy.periodMs) || policy.periodMs <= 0 || policy.periodMs % HOUR_MS !== 0) {
    throw new KeyDocumentError('the rotation period must be a whole, positive number of hours');
  }
}

/** How long a key stays valid once a rotation has superseded it, at most (see rotationWindowStart). */
export function supersededKeyLifetimeMs(policy: RotationPolicy): number {
  return (policy.keep - 1) * policy.periodMs;
}

/**
 * Secrets Manager runs a rotation at any time within a window that starts at midnight UTC and ends with that day
 * (periods in days), or starts on the hour and lasts one hour (periods in hours). Superseded keys count their life
 * from the start of this rotation's window, so they have expired when the window `keep - 1` periods later opens and
 * that rotation removes them. Counted from the rotation's own instant, a rotation early in its window would find them
 * still valid for a few hours, and the secret would carry them, useless, for one more period: about 90 bytes per
 * app, a third more room. They live at most one day (or hour) less than `keep - 1` periods.
 */
export function rotationWindowStart(now: number, policy: RotationPolicy): number {
  const unit = policy.periodMs % DAY_MS === 0 ? DAY_MS : HOUR_MS;
  return Math.floor(now / unit) * unit;
}

/** An app whose keys are kept as digests is managed by hand: rotation cannot give its client the new key. */
export function holdsDigestKey(keys: readonly DocumentKey[]): boolean {
  return keys.some((key) => key.stored.startsWith(DIGEST_PREFIX));
}

/**
 * The fresh key's own expiry: none, unless every key of the app has one. The app then has an end date (an operator
 * gave it one, with `add-app --expires-in` or `expire`), and a rotation must not extend it, so the fresh key ends
 * with the last of them. The pending-version check relies on this being computable from the current keys alone.
 */
export function freshKeyExpiry(keys: readonly DocumentKey[]): DocumentKey['expires'] {
  let last: { readonly text: string; readonly at: number } | undefined;
  for (const key of keys) {
    const at = expiresAtOf(key);
    if (key.expires === undefined || at === undefined) return undefined;
    if (last === undefined || at > last.at) last = { text: key.expires, at };
  }
  return last?.text;
}

/**
 * One scheduled rotation at `now` (epoch ms). Every app holding a key still valid gets one fresh key from `newKey`,
 * appended after its keys (newest last); its expired keys are removed; each other key expires at the earlier of its
 * own expiry and `keep - 1` periods after the start of this rotation's window. Apps with a `sha256:` key, and apps with no valid key left, are left
 * as they were. Every other field of an app (its allowlist, expiries already earlier) is kept as written.
 */
export function rotateAllApps(
  document: KeyDocument,
  policy: RotationPolicy,
  now: number,
  newKey: () => string,
): RotatedDocument {
  assertValidRotationPolicy(policy);
  const supersededKeysExpireBy = rotationWindowStart(now, policy) + supersededKeyLifetimeMs(policy);
  let next = document;
  const rotatedAppIds: string[] = [];
  const skippedAppIds: string[] = [];
  const expiredAppIds: string[] = [];
  const prunedKeys: PrunedKey[] = [];
  for (const appId of [...document.keys()].sort(byCodeUnit)) {
    const { keys } = appOf(document, appId);
    if (holdsDigestKey(keys)) {
      skippedAppIds.push(appId);
      continue;
    }
    if (keys.every((key) => isExpired(key, now))) {
      expiredAppIds.push(appId);
      continue;
    }
    const pruned = pruneExpiredKeys(next, now, appId);
    prunedKeys.push(...pruned.removed);
    const fresh: DocumentKey = { stored: newKey() };
    const expires = freshKeyExpiry(keys);
    const withFreshKey = addKey(
      pruned.document,
      appId,
      expires === undefined ? fresh : { ...fresh, expires },
    );
    next = limitOtherKeysExpiry(withFreshKey, appId, keyIdOf(fresh.stored), supersededKeysExpireBy);
    rotatedAppIds.push(appId);
  }
  return { document: next, rotatedAppIds, skippedAppIds, expiredAppIds, prunedKeys, supersededKeysExpireBy };
}
