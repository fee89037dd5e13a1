import { appIdProblem, APP_ID_PATTERN, looksLikeGeneratedKey } from './app-id';
import { GENERATED_KEY_PREFIX, readStoredKey } from './key-material';
import { parseCidr, type Cidr } from './network';
import { readRateLimit, type RateLimit } from './rate-limit';
import type { SecretEntry } from './secret-json';
import { parseTimestamp, TIMESTAMP_RULE } from './timestamp';

/**
 * One member of the secret, in any of its forms:
 *
 *   "app": "<key>"                                   a key entry
 *   "app": ["<key>", {"key": "<key>", "expires": "2026-12-24T00:00:00Z"}]   a list of key entries
 *   "app": {"keys": [...], "allowedCidrs": ["203.0.113.0/24"], "rateLimit": {"perSecond": 20, "burst": 40}}
 *                                                    an app object (both fields optional)
 *
 * where a key is plain or `sha256:<64 hex>`. Strict, so that a typo can never widen access: an unknown field or an
 * unparsable `expires` makes that key malformed (it is left out); an unknown field of the app object, or a
 * malformed `allowedCidrs` or `rateLimit`, leaves the whole app out (it fails closed).
 */

/**
 * One entry that was left out, located by position so that nothing of its text is repeated: an operator who
 * pasted a key where the app id belongs must not find it in the logs.
 */
export interface KeyringProblem {
  /** 1-based position of the entry in the secret's JSON object, in the order written. */
  readonly entryPosition: number;
  /** Set only when the app id itself is valid; for the key CLI's own output, never for logs. */
  readonly appId?: string;
  /** 1-based position of the key in the app's list (a single key not in a list is key 1). */
  readonly keyPosition?: number;
  readonly reason: string;
}

/** A key's expiry, as written and as an instant. */
export interface KeyExpiry {
  readonly text: string;
  /** Epoch milliseconds: the key is refused from this instant on. */
  readonly at: number;
}

/** A stored key that can be used: as written (plain or `sha256:`), its digest, and its expiry when it has one. */
export interface ReadableKey {
  readonly stored: string;
  readonly digest: Buffer;
  readonly expires?: KeyExpiry;
}

/** The networks an app may call from, as written and as parsed. */
export interface ReadableAllowlist {
  readonly texts: readonly string[];
  readonly cidrs: readonly Cidr[];
}

export interface AppEntryReading {
  /** Undefined when the app id is invalid. */
  readonly appId: string | undefined;
  /** Whether the app can be served: false when its id, its object or its allowlist is malformed, or no key is usable. */
  readonly usable: boolean;
  /** The entry's keys that can be used, in order. */
  readonly keys: readonly ReadableKey[];
  /** Absent: any network. An empty list: none. */
  readonly allowlist?: ReadableAllowlist;
  /** The app's own rate limit; absent: the stack's default applies (if any). */
  readonly rateLimit?: ReadableRateLimit;
  readonly problems: readonly KeyringProblem[];
}

/** An app's own rate limit, as written and as applied (a burst left out is one second's worth). */
export interface ReadableRateLimit {
  readonly written: { readonly perSecond: number; readonly burst?: number };
  readonly limit: RateLimit;
}

export const APP_OBJECT_FIELDS = ['keys', 'allowedCidrs', 'rateLimit'] as const;
export const KEY_OBJECT_FIELDS = ['key', 'expires'] as const;

type Located = Omit<KeyringProblem, 'reason'>;

function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The 1-based position of the first field not in `allowed`; its name is never repeated (it may be anything). */
function unknownFieldPosition(value: Readonly<Record<string, unknown>>, allowed: readonly string[]): number {
  return Object.keys(value).findIndex((field) => !allowed.includes(field)) + 1;
}

function fieldList(fields: readonly string[]): string {
  return fields.map((field) => `"${field}"`).join(', ');
}

/** Why an app id is refused, in words that repeat nothing of it; undefined when it is valid. */
function invalidAppIdReason(appId: string): string | undefined {
  if (!APP_ID_PATTERN.test(appId)) return 'app id is outside the allowed alphabet or length';
  if (looksLikeGeneratedKey(appId)) {
    return `app id starts with ${GENERATED_KEY_PREFIX}, like a generated key (a pasted key?)`;
  }
  if (appIdProblem(appId) !== undefined) return 'app id has the shape of a generated key (a pasted key?)';
  return undefined;
}

type KeyReading =
  { readonly ok: true; readonly key: ReadableKey } | { readonly ok: false; readonly reason: string };

/** A key entry: a stored key string, or `{"key": <stored key>, "expires": <RFC 3339>}`. */
function readKeyEntry(value: unknown): KeyReading {
  if (typeof value === 'string') {
    const reading = readStoredKey(value);
    return reading.ok ? { ok: true, key: { stored: value, digest: reading.digest } } : reading;
  }
  if (!isPlainObject(value)) return { ok: false, reason: 'key is not a string or a key object' };
  const unknownField = unknownFieldPosition(value, KEY_OBJECT_FIELDS);
  if (unknownField > 0) {
    return {
      ok: false,
      reason: `key object field #${unknownField} is not one of ${fieldList(KEY_OBJECT_FIELDS)}`,
    };
  }
  const stored: unknown = value.key;
  if (typeof stored !== 'string') return { ok: false, reason: 'key object needs "key", the key as a string' };
  const reading = readStoredKey(stored);
  if (!reading.ok) return reading;
  if (!Object.hasOwn(value, 'expires')) return { ok: true, key: { stored, digest: reading.digest } };
  const expires: unknown = value.expires;
  const at = typeof expires === 'string' ? parseTimestamp(expires) : undefined;
  if (typeof expires !== 'string' || at === undefined) {
    return { ok: false, reason: `"expires" must be ${TIMESTAMP_RULE}` };
  }
  return { ok: true, key: { stored, digest: reading.digest, expires: { text: expires, at } } };
}

type AllowlistReading =
  | { readonly ok: true; readonly allowlist: ReadableAllowlist }
  | { readonly ok: false; readonly reason: string };

function readAllowlist(value: unknown): AllowlistReading {
  if (!Array.isArray(value)) return { ok: false, reason: '"allowedCidrs" must be a list of CIDR blocks' };
  const texts: string[] = [];
  const cidrs: Cidr[] = [];
  for (const [index, candidate] of (value as unknown[]).entries()) {
    const reading = typeof candidate === 'string' ? parseCidr(candidate) : undefined;
    if (reading === undefined || !reading.ok) {
      const why = reading === undefined ? 'not a string' : reading.reason;
      return { ok: false, reason: `"allowedCidrs" #${index + 1}: ${why}` };
    }
    texts.push(candidate as string);
    cidrs.push(reading.cidr);
  }
  return { ok: true, allowlist: { texts, cidrs } };
}

function unusable(located: Located, reason: string): AppEntryReading {
  return { appId: located.appId, usable: false, keys: [], problems: [{ ...located, reason }] };
}

/** The key entries of a list (or a lone key entry): the usable ones, and one problem per malformed one. */
function readKeyEntries(
  values: readonly unknown[],
  located: Located,
): { readonly keys: ReadableKey[]; readonly problems: KeyringProblem[] } {
  const keys: ReadableKey[] = [];
  const problems: KeyringProblem[] = [];
  values.forEach((candidate, index) => {
    const reading = readKeyEntry(candidate);
    if (reading.ok) keys.push(reading.key);
    else problems.push({ ...located, keyPosition: index + 1, reason: reading.reason });
  });
  return { keys, problems };
}

/**
 * Reads one member of the secret. Shared by the lenient keyring (which serves what it can) and the strict key
 * document (which refuses any problem), so both judge entries alike.
 */
export function readAppEntry({ position: entryPosition, name, value }: SecretEntry): AppEntryReading {
  const appIdReason = invalidAppIdReason(name);
  if (appIdReason !== undefined) return unusable({ entryPosition }, appIdReason);
  const located: Located = { entryPosition, appId: name };

  let keyValues: unknown;
  let allowlist: ReadableAllowlist | undefined;
  let rateLimit: ReadableRateLimit | undefined;
  // An object with `key` (and no `keys`) is a lone key object: a key entry, like a lone key string.
  if (isPlainObject(value) && !(Object.hasOwn(value, 'key') && !Object.hasOwn(value, 'keys'))) {
    const unknownField = unknownFieldPosition(value, APP_OBJECT_FIELDS);
    if (unknownField > 0) {
      return unusable(
        located,
        `app object field #${unknownField} is not one of ${fieldList(APP_OBJECT_FIELDS)}`,
      );
    }
    if (!Array.isArray(value.keys)) return unusable(located, 'app object needs "keys", a list of keys');
    keyValues = value.keys;
    if (Object.hasOwn(value, 'allowedCidrs')) {
      const reading = readAllowlist(value.allowedCidrs);
      if (!reading.ok) return unusable(located, reading.reason);
      allowlist = reading.allowlist;
    }
    if (Object.hasOwn(value, 'rateLimit')) {
      // Fails closed like the allowlist: a limit that cannot be read must not turn into no limit at all.
      const reading = readRateLimit(value.rateLimit);
      if (!reading.ok) return unusable(located, reading.reason);
      rateLimit = { written: reading.written, limit: reading.limit };
    }
  } else {
    keyValues = value;
  }

  const values: readonly unknown[] = Array.isArray(keyValues) ? keyValues : [keyValues];
  if (values.length === 0) return unusable(located, 'app has an empty key list');
  const { keys, problems } = readKeyEntries(values, located);
  return {
    appId: name,
    usable: keys.length > 0,
    keys,
    ...(allowlist === undefined ? {} : { allowlist }),
    ...(rateLimit === undefined ? {} : { rateLimit }),
    problems,
  };
}
