import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import {
  checksumText,
  crc32OfAscii,
  generatePrefixedKey,
  isWellFormedKey,
  KEY_PATTERN,
  keyShape,
} from '../../../../shared/keys/key-format';

/** Worked by hand with Python's zlib.crc32 (docs/security.md shows the same example). */
const EXAMPLE_RANDOM = '0123456789abcdefABCDEFghijklmnop';
const EXAMPLE_KEY = `pay_${EXAMPLE_RANDOM}4U51XL`;

describe('key format', () => {
  it('computes CRC32 exactly as zlib does, for any ASCII text', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)) }),
        (text) => {
          expect(crc32OfAscii(text)).toBe(crc32(Buffer.from(text, 'ascii')));
        },
      ),
    );
  });

  it('writes the checksum in 6 base62 digits, most significant first, as the published example shows', () => {
    expect(checksumText(EXAMPLE_RANDOM)).toBe('4U51XL');
    expect(keyShape(EXAMPLE_KEY, 'pay')).toBe('prefixed');
  });

  it('generates keys of the published pattern, with the stack prefix and a valid checksum', () => {
    for (const prefix of ['pay', 'ab', 'stage_2', 'abcdefghijklmnop']) {
      const key = generatePrefixedKey(prefix);
      expect(key).toMatch(KEY_PATTERN);
      expect(key.startsWith(`${prefix}_`)).toBe(true);
      expect(key).toHaveLength(prefix.length + 1 + 38);
      expect(keyShape(key, prefix)).toBe('prefixed');
      expect(isWellFormedKey(key)).toBe(true);
    }
  });

  it('draws every base62 character (no alphabet is left out by the sampling)', () => {
    const seen = new Set(Array.from({ length: 200 }, () => generatePrefixedKey().slice(4, 36)).join(''));
    expect(seen.size).toBe(62);
  });

  it('refuses a prefix outside 2 to 16 of a-z, 0-9 and _', () => {
    for (const prefix of ['p', 'PAY', 'pay-k', 'abcdefghijklmnopq', '']) {
      expect(() => generatePrefixedKey(prefix)).toThrow(
        'invalid key prefix: 2 to 16 characters of a-z, 0-9 and _',
      );
    }
  });

  it.each([
    ['a changed checksum', EXAMPLE_KEY.slice(0, -1) + 'M'],
    ['a changed random character', EXAMPLE_KEY.replace('0123', '0124')],
    ['one character short', EXAMPLE_KEY.slice(0, -1)],
    ['one character long', `${EXAMPLE_KEY}0`],
    ['a character outside base62', EXAMPLE_KEY.replace('abc', 'a-c')],
    ['nothing after the prefix', 'pay_'],
  ])('calls a key with the prefix and %s malformed', (_, key) => {
    expect(keyShape(key, 'pay')).toBe('malformed');
    expect(isWellFormedKey(key)).toBe(false);
  });

  it('leaves a key without the stack prefix to the legacy lookup', () => {
    expect(keyShape('payk_Ghx0c2VjcmV0LWtleS1mb3ItdGVzdHMtb25seS0xMjM0NTY3', 'pay')).toBe('unprefixed');
    expect(keyShape(EXAMPLE_KEY, 'live')).toBe('unprefixed');
  });

  it('finds a single-character change in almost every made-up key (the checksum catches typos)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: EXAMPLE_KEY.length - 1 }),
        fc.constantFrom('x', 'y', 'z', 'X', 'Y', 'Z', '7', '8', '9'),
        (at, character) => {
          fc.pre(EXAMPLE_KEY.charAt(at) !== character);
          const changed = EXAMPLE_KEY.slice(0, at) + character + EXAMPLE_KEY.slice(at + 1);
          expect(keyShape(changed, 'pay')).toBe('malformed');
        },
      ),
    );
  });
});
