import {
  isDigestForm,
  keyIdFromDigest,
  matchDigest,
  matchDigestOf,
  readStoredKey,
  toCompactDigestForm,
  toDigestForm,
} from '../../../../shared/keys/key-material';

/** Worked by hand with Python (hashlib, base64): docs/keys.md shows the same example. */
const EXAMPLE_KEY = 'pay_0123456789abcdefABCDEFghijklmnop4U51XL';
const EXAMPLE_COMPACT = 'd:I1olB7avcn9mUuYsjbL1kA';
const EXAMPLE_COMPACT_KEY_ID = '6e15c9a7f4ef';

function storedDigest(stored: string): Buffer {
  const reading = readStoredKey(stored);
  if (!reading.ok) throw new Error(reading.reason);
  return reading.digest;
}

describe('stored key forms', () => {
  it('writes the compact digest as d: and 22 base64url characters of the first 128 bits of SHA-256', () => {
    expect(toCompactDigestForm(EXAMPLE_KEY)).toBe(EXAMPLE_COMPACT);
    expect(EXAMPLE_COMPACT).toHaveLength(24);
  });

  it('compares every stored form over the same 16 bytes of the presented key', () => {
    const presented = matchDigestOf(EXAMPLE_KEY);
    for (const stored of [EXAMPLE_KEY, toDigestForm(EXAMPLE_KEY), toCompactDigestForm(EXAMPLE_KEY)]) {
      expect(matchDigest(storedDigest(stored))).toEqual(presented);
    }
  });

  it('keeps the key id of plain and sha256: entries, and derives a d: entry id from its 16 bytes', () => {
    const plainId = keyIdFromDigest(storedDigest(EXAMPLE_KEY));
    expect(keyIdFromDigest(storedDigest(toDigestForm(EXAMPLE_KEY)))).toBe(plainId);
    expect(keyIdFromDigest(storedDigest(EXAMPLE_COMPACT))).toBe(EXAMPLE_COMPACT_KEY_ID);
  });

  it('tells digest forms from keys', () => {
    expect(isDigestForm(EXAMPLE_COMPACT)).toBe(true);
    expect(isDigestForm(toDigestForm(EXAMPLE_KEY))).toBe(true);
    expect(isDigestForm(EXAMPLE_KEY)).toBe(false);
  });

  it('reads a d:-led value that is not exactly a compact digest as a plain key, as before', () => {
    // 22 characters whose last holds bits a 16-byte digest cannot have: not canonical, so not a digest.
    const notCanonical = 'd:I1olB7avcn9mUuYsjbL1kB';
    expect(isDigestForm(notCanonical)).toBe(false);
    expect(storedDigest(notCanonical)).toHaveLength(32);
    expect(storedDigest('d:a-longer-plain-key-of-thirty-chars')).toHaveLength(32);
  });
});
