import { timingSafeEqual } from 'node:crypto';
import type { Keyring, StoredKey } from './keyring';
import { sha256 } from './key-material';

export interface Credentials {
  readonly appId: string;
  readonly appKey: string;
}

/** Why a request was refused. For logs only: every cause gets the same 401 response. */
export type AuthFailureReason =
  'missing_app_id' | 'missing_app_key' | 'duplicate_header' | 'unknown_app' | 'wrong_key';

export type CredentialsReading =
  | { readonly ok: true; readonly credentials: Credentials }
  | { readonly ok: false; readonly reason: AuthFailureReason };

export type AuthDecision =
  | { readonly ok: true; readonly appId: string; readonly keyId: string }
  | { readonly ok: false; readonly reason: AuthFailureReason };

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
const DUMMY_KEY: StoredKey = { id: 'dummy', digest: sha256('payment-api dummy key') };

/** The most keys any app holds, per keyring (computed once: keyrings are immutable and replaced on refresh). */
const comparisonsPerKeyring = new WeakMap<Keyring, number>();

function comparisonsFor(keyring: Keyring): number {
  let count = comparisonsPerKeyring.get(keyring);
  if (count === undefined) {
    count = Math.max(1, ...[...keyring.values()].map((keys) => keys.length));
    comparisonsPerKeyring.set(keyring, count);
  }
  return count;
}

/**
 * Decides whether the presented key is one of the app's keys. Pure: no I/O, no clock.
 *
 * The presented key is hashed, then compared with `timingSafeEqual` over equal-length (32-byte) digests the
 * same number of times for every request: as many times as the largest app has keys, padding with a dummy
 * digest, without stopping at a match. So neither the key, nor whether the app exists, nor how many keys it has
 * shows in the timing.
 */
export function authenticate(credentials: Credentials, keyring: Keyring): AuthDecision {
  const presented = sha256(credentials.appKey);
  const appKeys = keyring.get(credentials.appId);
  const candidates = appKeys ?? [];

  let matchedKeyId: string | undefined;
  for (let index = 0; index < comparisonsFor(keyring); index++) {
    const candidate = candidates[index];
    const equal = timingSafeEqual((candidate ?? DUMMY_KEY).digest, presented);
    if (equal && candidate !== undefined && matchedKeyId === undefined) matchedKeyId = candidate.id;
  }

  if (appKeys === undefined) return { ok: false, reason: 'unknown_app' };
  if (matchedKeyId === undefined) return { ok: false, reason: 'wrong_key' };
  return { ok: true, appId: credentials.appId, keyId: matchedKeyId };
}
