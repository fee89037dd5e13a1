import { randomBytes } from 'node:crypto';

/**
 * The format of new keys: `<prefix>_<random><checksum>`, as GitHub's tokens (`ghp_…`) are made, so that scanners
 * recognise a leaked key offline and a made-up one is refused before any lookup.
 *
 * - `<prefix>`: per stack, 2 to 16 of `a-z`, `0-9`, `_` (`-c keyPrefix`), `pay` by default.
 * - `<random>`: 32 base62 characters (`0-9A-Za-z`) from the CSPRNG: 32 × log2(62) ≈ 190.5 bits.
 * - `<checksum>`: CRC32 (IEEE 802.3, as `zlib.crc32`) of the 32 random characters' ASCII bytes, written in base62
 *   with the same alphabet, most significant digit first, left-padded with `0` to 6 characters.
 *
 * The whole format is one regular expression (`KEY_PATTERN`), published in docs/security.md and scanning/.
 */

export const DEFAULT_KEY_PREFIX = 'pay';
export const KEY_PREFIX_PATTERN = /^[a-z0-9_]{2,16}$/;
export const KEY_PREFIX_RULE = '2 to 16 characters of a-z, 0-9 and _';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const RANDOM_LENGTH = 32;
export const CHECKSUM_LENGTH = 6;
/** The part after `<prefix>_`. */
export const BODY_LENGTH = RANDOM_LENGTH + CHECKSUM_LENGTH;

/** Any key of this format, whatever its stack's prefix: what scanners look for (checksum checked separately). */
export const KEY_PATTERN = /^[a-z0-9_]{2,16}_[0-9A-Za-z]{38}$/;
/** KEY_PATTERN's source, without anchors, as scanners' rules embed it. */
export const KEY_PATTERN_SOURCE = '[a-z0-9_]{2,16}_[0-9A-Za-z]{38}';

const BODY_PATTERN = /^[0-9A-Za-z]{38}$/;

export function isKeyPrefix(value: string): boolean {
  return KEY_PREFIX_PATTERN.test(value);
}

/**
 * CRC32 with the IEEE 802.3 polynomial (reflected 0xEDB88320), as zlib computes it. Written here rather than taken
 * from node:zlib, whose first load costs the payment Lambda about 1.6 ms of cold start for twelve lines of work.
 */
let crcTable: Uint32Array | undefined;

function table(): Uint32Array {
  if (crcTable !== undefined) return crcTable;
  const made = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let value = byte;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    made[byte] = value >>> 0;
  }
  crcTable = made;
  return made;
}

/** CRC32 of a string's code units taken as bytes: callers pass ASCII only. */
export function crc32OfAscii(text: string): number {
  const lookup = table();
  let crc = 0xffffffff;
  for (let index = 0; index < text.length; index++) {
    crc = (lookup[(crc ^ text.charCodeAt(index)) & 0xff] ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** A number below 62^6 in 6 base62 digits, most significant first. */
export function checksumText(randomPart: string): string {
  let value = crc32OfAscii(randomPart);
  let text = '';
  for (let digit = 0; digit < CHECKSUM_LENGTH; digit++) {
    text = BASE62.charAt(value % 62) + text;
    value = Math.floor(value / 62);
  }
  return text;
}

/** 32 base62 characters, each uniform: bytes of 248 and above are drawn again, so `% 62` has no bias. */
function randomBase62(length: number): string {
  let text = '';
  while (text.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && text.length < length) text += BASE62.charAt(byte % 62);
    }
  }
  return text;
}

/** A fresh key of this format for a stack's prefix. */
export function generatePrefixedKey(prefix: string = DEFAULT_KEY_PREFIX): string {
  if (!isKeyPrefix(prefix)) throw new Error(`invalid key prefix: ${KEY_PREFIX_RULE}`);
  const randomPart = randomBase62(RANDOM_LENGTH);
  return `${prefix}_${randomPart}${checksumText(randomPart)}`;
}

/** Whether the part after `<prefix>_` has the right length, alphabet and checksum. */
export function isWellFormedBody(body: string): boolean {
  if (!BODY_PATTERN.test(body)) return false;
  const randomPart = body.slice(0, RANDOM_LENGTH);
  return body.slice(RANDOM_LENGTH) === checksumText(randomPart);
}

/**
 * How a presented key stands against a stack's prefix:
 * - `prefixed`: it has the prefix and is well formed (length, alphabet, checksum): worth a lookup;
 * - `malformed`: it has the prefix but cannot be one of this stack's keys: refused before any lookup;
 * - `unprefixed`: a legacy key (made before this format), looked up as before unless legacy keys are refused.
 */
export type KeyShape = 'prefixed' | 'malformed' | 'unprefixed';

export function keyShape(key: string, prefix: string): KeyShape {
  if (!key.startsWith(`${prefix}_`)) return 'unprefixed';
  return isWellFormedBody(key.slice(prefix.length + 1)) ? 'prefixed' : 'malformed';
}

/** Whether any string is a key of this format for some prefix, checksum included: what a scanner's rule decides. */
export function isWellFormedKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  return isWellFormedBody(key.slice(key.length - BODY_LENGTH));
}
