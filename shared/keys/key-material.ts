import { createHash, randomBytes } from 'node:crypto';

/** Marks a stored key that is kept only as the SHA-256 digest of the real key. */
export const DIGEST_PREFIX = 'sha256:';

/** Fixed prefix of every generated key, so secret scanners can recognise a leaked one. */
export const GENERATED_KEY_PREFIX = 'payk_';

/** 32 bytes = 256 bits from the system's CSPRNG. */
const GENERATED_KEY_BYTES = 32;

/** Plain keys travel in an HTTP header: visible ASCII only, no spaces, of a length worth guessing at. */
export const MIN_KEY_LENGTH = 16;
export const MAX_KEY_LENGTH = 512;
const PLAIN_KEY_PATTERN = /^[\x21-\x7e]+$/;
const DIGEST_PATTERN = /^sha256:[0-9a-fA-F]{64}$/;

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A fresh key: prefix + 43 base64url characters (URL-safe, no padding). */
export function generateKey(): string {
  return GENERATED_KEY_PREFIX + randomBytes(GENERATED_KEY_BYTES).toString('base64url');
}

/** The stored form of a key when only its digest is to be kept. */
export function toDigestForm(key: string): string {
  return DIGEST_PREFIX + sha256(key).toString('hex');
}

/**
 * A short, non-secret fingerprint of a key. It is derived from the key's digest, so a key and its
 * `sha256:` form share one id, and it reveals nothing usable about either.
 */
export function keyIdFromDigest(digest: Buffer): string {
  return createHash('sha256').update('payment-api key id\0').update(digest).digest('hex').slice(0, 12);
}

/** What keyIdFromDigest makes, and what `list` shows: 12 lower-case hex characters. */
const KEY_ID_PATTERN = /^[0-9a-f]{12}$/;

export function isKeyId(value: string): boolean {
  return KEY_ID_PATTERN.test(value);
}

/** Names the mistake without repeating the value, which may be a key pasted where its id belongs. */
export const INVALID_KEY_ID_MESSAGE =
  'invalid key id: expected the 12 hex characters that "list" shows, not a key';

export type StoredKeyReading =
  { readonly ok: true; readonly digest: Buffer } | { readonly ok: false; readonly reason: string };

/** Reads one stored key (plain or `sha256:<hex>`) into the digest that presented keys are compared with. */
export function readStoredKey(value: unknown): StoredKeyReading {
  if (typeof value !== 'string') return { ok: false, reason: 'key is not a string' };
  if (value.startsWith(DIGEST_PREFIX)) {
    return DIGEST_PATTERN.test(value)
      ? { ok: true, digest: Buffer.from(value.slice(DIGEST_PREFIX.length), 'hex') }
      : { ok: false, reason: 'sha256: form needs exactly 64 hex characters' };
  }
  if (value.length < MIN_KEY_LENGTH || value.length > MAX_KEY_LENGTH) {
    return { ok: false, reason: `key length must be ${MIN_KEY_LENGTH} to ${MAX_KEY_LENGTH} characters` };
  }
  if (!PLAIN_KEY_PATTERN.test(value)) {
    return { ok: false, reason: 'key may hold only visible ASCII characters, no spaces' };
  }
  return { ok: true, digest: sha256(value) };
}
