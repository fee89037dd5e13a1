import { createHash, randomBytes } from 'node:crypto';

/** Marks a stored key that is kept only as the SHA-256 digest of the real key (the first digest form). */
export const DIGEST_PREFIX = 'sha256:';

/**
 * Marks the compact digest form: `d:` and the first 16 bytes (128 bits) of SHA-256 over the key, in base64url
 * without padding: 24 characters in all, against 71 for `sha256:<hex>`. 128 bits of a key with 190 bits of entropy
 * leave a preimage search at 2^128 work; the comparison a request makes is over those 16 bytes for every form.
 */
export const COMPACT_DIGEST_PREFIX = 'd:';

/** The bytes every comparison is made over: the first 16 of the key's SHA-256, whatever the stored form. */
export const MATCH_DIGEST_BYTES = 16;

/** Fixed prefix of every generated key, so secret scanners can recognise a leaked one. */
export const GENERATED_KEY_PREFIX = 'payk_';

/** 32 bytes = 256 bits from the system's CSPRNG. */
const GENERATED_KEY_BYTES = 32;

/** Plain keys travel in an HTTP header: visible ASCII only, no spaces, of a length worth guessing at. */
export const MIN_KEY_LENGTH = 16;
export const MAX_KEY_LENGTH = 512;
const PLAIN_KEY_PATTERN = /^[\x21-\x7e]+$/;
const DIGEST_PATTERN = /^sha256:[0-9a-fA-F]{64}$/;
/** 22 base64url characters hold 132 bits: the last one's low 4 bits must be zero, so each digest has one text. */
const COMPACT_DIGEST_PATTERN = /^d:[A-Za-z0-9_-]{21}[AQgw]$/;

export function sha256(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}

/** A fresh key: prefix + 43 base64url characters (URL-safe, no padding). */
export function generateKey(): string {
  return GENERATED_KEY_PREFIX + randomBytes(GENERATED_KEY_BYTES).toString('base64url');
}

/** The first stored form of a key when only its digest is to be kept: `sha256:<64 hex>`. */
export function toDigestForm(key: string): string {
  return DIGEST_PREFIX + sha256(key).toString('hex');
}

/** The compact stored form of a key: `d:<22 base64url>`, 24 characters. */
export function toCompactDigestForm(key: string): string {
  return COMPACT_DIGEST_PREFIX + sha256(key).subarray(0, MATCH_DIGEST_BYTES).toString('base64url');
}

/** Whether a stored key is one of the digest forms (`sha256:` or `d:`) rather than the key itself. */
export function isDigestForm(stored: string): boolean {
  return stored.startsWith(DIGEST_PREFIX) || COMPACT_DIGEST_PATTERN.test(stored);
}

/** The 16 bytes a presented key is compared with: computed once per request. */
export function matchDigestOf(key: string): Buffer {
  return sha256(key).subarray(0, MATCH_DIGEST_BYTES);
}

/**
 * A short, non-secret fingerprint of a key, derived from the digest bytes its entry stores: the 32 bytes of
 * SHA-256 for a plain or `sha256:` entry (so those two share one id, as before the compact form), the 16 bytes of a
 * `d:` entry. It reveals nothing usable about the key.
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
  /** `digest`: the bytes the entry stores (32, or 16 for `d:`); the key id is derived from them. */
  { readonly ok: true; readonly digest: Buffer } | { readonly ok: false; readonly reason: string };

/** The 16 bytes a stored key is compared over (a view, no copy). */
export function matchDigest(storedDigest: Buffer): Buffer {
  return storedDigest.length === MATCH_DIGEST_BYTES
    ? storedDigest
    : storedDigest.subarray(0, MATCH_DIGEST_BYTES);
}

/** Reads one stored key (plain, `sha256:<hex>` or `d:<base64url>`) into the digest bytes it stands for. */
export function readStoredKey(value: unknown): StoredKeyReading {
  if (typeof value !== 'string') return { ok: false, reason: 'key is not a string' };
  if (COMPACT_DIGEST_PATTERN.test(value)) {
    return { ok: true, digest: Buffer.from(value.slice(COMPACT_DIGEST_PREFIX.length), 'base64url') };
  }
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
