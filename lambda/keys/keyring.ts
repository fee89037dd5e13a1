import { isValidAppId } from './app-id';
import { keyIdFromDigest, readStoredKey } from './key-material';
import { readSecretObject } from './secret-json';

export interface StoredKey {
  /** Non-secret fingerprint, safe for logs. */
  readonly id: string;
  /** SHA-256 of the key; presented keys are hashed and compared with this. */
  readonly digest: Buffer;
}

/** App id → its valid keys (more than one while a rotation is under way). */
export type Keyring = ReadonlyMap<string, readonly StoredKey[]>;

/** One entry that was left out. Names the app (and key position), never the value. */
export interface KeyringProblem {
  readonly appId: string;
  readonly keyIndex?: number;
  readonly reason: string;
}

export interface ParsedKeyring {
  readonly keyring: Keyring;
  readonly problems: readonly KeyringProblem[];
}

/** The secret as a whole cannot be used. Its message never quotes the secret. */
export class MalformedSecretError extends Error {
  override readonly name = 'MalformedSecretError';
}

/** App ids are echoed into logs only when they fit the allowed alphabet; anything else is summarised. */
function printableAppId(appId: string): string {
  return isValidAppId(appId) ? appId : `<invalid app id of ${appId.length} characters>`;
}

/**
 * Parses the secret's `SecretString`: a JSON object mapping each App-id to a key or a list of keys, each key
 * written as itself or as `sha256:<64 hex>`.
 *
 * Malformed entries are dropped and reported; they never authenticate. A secret that is not a JSON object, or
 * whose entries are all malformed, throws MalformedSecretError so the caller keeps its last good keyring (or
 * answers 503) instead of locking every client out. `{}` is a valid, empty keyring.
 */
export function parseKeyring(secretString: string): ParsedKeyring {
  const reading = readSecretObject(secretString);
  if (!reading.ok) throw new MalformedSecretError(`secret ${reading.problem}`);

  const keyring = new Map<string, StoredKey[]>();
  const problems: KeyringProblem[] = [];
  const entries = reading.entries;

  for (const [appId, value] of entries) {
    if (!isValidAppId(appId)) {
      problems.push({
        appId: printableAppId(appId),
        reason: 'app id is outside the allowed alphabet or length',
      });
      continue;
    }
    const values: unknown[] = Array.isArray(value) ? value : [value];
    if (values.length === 0) {
      problems.push({ appId, reason: 'app has an empty key list' });
      continue;
    }
    const keys: StoredKey[] = [];
    values.forEach((candidate, keyIndex) => {
      const reading = readStoredKey(candidate);
      if (reading.ok) {
        keys.push({ id: keyIdFromDigest(reading.digest), digest: reading.digest });
      } else {
        problems.push({ appId, keyIndex, reason: reading.reason });
      }
    });
    if (keys.length > 0) keyring.set(appId, keys);
  }

  if (entries.length > 0 && keyring.size === 0) {
    throw new MalformedSecretError(`secret has ${entries.length} app entries and none is valid`);
  }
  return { keyring, problems };
}
