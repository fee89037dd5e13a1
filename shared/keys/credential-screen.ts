import { isValidAppId } from './app-id';
import type { Credentials } from './authenticate';
import { DEFAULT_KEY_PREFIX, keyShape } from './key-format';

/** What a stack accepts as a key before looking anything up (context `keyPrefix` and `legacyKeys`). */
export interface KeyFormatPolicy {
  /** The stack's key prefix: a key starting with `<prefix>_` must be well formed (length, alphabet, checksum). */
  readonly prefix: string;
  /** Whether keys without the prefix (made before the key format) are still looked up. */
  readonly legacyKeys: boolean;
}

export const DEFAULT_KEY_FORMAT_POLICY: KeyFormatPolicy = { prefix: DEFAULT_KEY_PREFIX, legacyKeys: true };

/**
 * Why credentials are refused before any lookup. For logs only: the caller gets the same 401 as for any cause.
 * - `invalid_app_id`: the App-id can never name an app (alphabet, length, the shape of a key), so no shard can
 *   hold it;
 * - `malformed_key`: the key starts with the stack's `<prefix>_` but its length, alphabet or checksum is wrong;
 * - `legacy_key`: the key has no prefix and the stack refuses legacy keys (`legacyKeys=false`).
 */
export type ScreenFailureReason = 'invalid_app_id' | 'malformed_key' | 'legacy_key';

/**
 * Judges the credentials on their own, before the cache or any shard is read: a flood of made-up keys or App-ids
 * then costs no fetch. Pure, and independent of what the registry holds, so a refusal here tells a caller nothing
 * about which apps exist: anyone can compute it from the request and the stack's prefix.
 */
export function screenCredentials(
  credentials: Credentials,
  policy: KeyFormatPolicy,
): ScreenFailureReason | undefined {
  if (!isValidAppId(credentials.appId)) return 'invalid_app_id';
  switch (keyShape(credentials.appKey, policy.prefix)) {
    case 'prefixed':
      return undefined;
    case 'malformed':
      return 'malformed_key';
    case 'unprefixed':
      return policy.legacyKeys ? undefined : 'legacy_key';
  }
}
