import { authenticate } from '../../../../shared/keys/authenticate';
import {
  keyIdOf,
  parseKeyDocument,
  serializeKeyDocument,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
import { generatePrefixedKey } from '../../../../shared/keys/key-format';
import { matchDigestOf, toCompactDigestForm, toDigestForm } from '../../../../shared/keys/key-material';
import {
  expireKeyAt,
  expireKeysByDigest,
  findKeysByDigest,
  isEndedBy,
  removeKeyAt,
  removeKeysByDigest,
} from '../../../../shared/keys/leaked-key';
import { parseKeyring } from '../../../../shared/keys/keyring';

const PLAIN = generatePrefixedKey('pay');
const HASHED = generatePrefixedKey('pay');
const COMPACT = generatePrefixedKey('pay');
const OTHER = generatePrefixedKey('pay');
const NOW = Date.parse('2026-03-01T12:00:00Z');

/** One app per stored form, and an app with two keys whose second is the compact one. */
const DOCUMENT: KeyDocument = parseKeyDocument(
  JSON.stringify({
    plain: [PLAIN],
    hashed: [toDigestForm(HASHED)],
    compact: { keys: [OTHER, toCompactDigestForm(COMPACT)], allowedCidrs: ['203.0.113.0/24'] },
  }),
);

describe('findKeysByDigest', () => {
  it.each([
    ['a plain entry', PLAIN, 'plain', 0, PLAIN],
    ['a sha256: entry', HASHED, 'hashed', 0, toDigestForm(HASHED)],
    ['a d: entry, second in its app', COMPACT, 'compact', 1, toCompactDigestForm(COMPACT)],
  ])('finds the key of %s, with the key id list shows for it', (_form, key, appId, position, stored) => {
    expect(findKeysByDigest(DOCUMENT, matchDigestOf(key))).toEqual([
      { appId, keyId: keyIdOf(stored), position },
    ]);
  });

  it('finds nothing for a key no app holds', () => {
    expect(findKeysByDigest(DOCUMENT, matchDigestOf(generatePrefixedKey('pay')))).toEqual([]);
  });

  it('finds every app that holds the same key', () => {
    const shared = parseKeyDocument(JSON.stringify({ a: [PLAIN], b: [OTHER, toCompactDigestForm(PLAIN)] }));

    expect(
      findKeysByDigest(shared, matchDigestOf(PLAIN)).map(({ appId, position }) => [appId, position]),
    ).toEqual([
      ['a', 0],
      ['b', 1],
    ]);
  });

  it('refuses a digest that is not the 16 bytes every request compares', () => {
    expect(() => findKeysByDigest(DOCUMENT, Buffer.alloc(32))).toThrow('a match digest has 16 bytes, got 32');
  });
});

describe('expireKeysByDigest', () => {
  it('ends the key at the given instant, keeping its stored form, its app, the other keys and the allowlist: every reader refuses it as expired, while the app keeps serving its other key', () => {
    const edit = expireKeysByDigest(DOCUMENT, matchDigestOf(COMPACT), NOW);
    const keyring = parseKeyring(serializeKeyDocument(edit.document)).keyring;
    const facts = { now: NOW, sourceIp: '203.0.113.9' };

    expect(edit.changed).toBe(true);
    expect(edit.removedApps).toEqual([]);
    expect(edit.document.get('compact')).toEqual({
      keys: [{ stored: OTHER }, { stored: toCompactDigestForm(COMPACT), expires: '2026-03-01T12:00:00Z' }],
      allowedCidrs: ['203.0.113.0/24'],
    });
    expect(edit.document.get('plain')).toBe(DOCUMENT.get('plain'));
    expect(authenticate({ appId: 'compact', appKey: COMPACT }, keyring, facts)).toMatchObject({
      ok: false,
      reason: 'expired_key',
    });
    expect(authenticate({ appId: 'compact', appKey: OTHER }, keyring, facts)).toMatchObject({ ok: true });
  });

  it('changes nothing the second time: a repeated report finds the key already ended', () => {
    const first = expireKeysByDigest(DOCUMENT, matchDigestOf(HASHED), NOW);
    const second = expireKeysByDigest(first.document, matchDigestOf(HASHED), NOW + 60_000);

    expect(second.changed).toBe(false);
    expect(second.found).toHaveLength(1);
    expect(second.document).toBe(first.document);
  });

  it('keeps an earlier expiry: a key that already expired is not brought back to a later one', () => {
    const expired = parseKeyDocument(
      JSON.stringify({ app: [{ key: PLAIN, expires: '2026-01-01T00:00:00Z' }] }),
    );
    const [location] = findKeysByDigest(expired, matchDigestOf(PLAIN));
    if (location === undefined) throw new Error('not found');

    expect(isEndedBy(expired, location, NOW)).toBe(true);
    expect(expireKeyAt(expired, location, NOW)).toEqual({
      document: expired,
      changed: false,
      appRemoved: false,
    });
  });

  it.each([
    ['keeps an app whose only key leaked, its key ended', [PLAIN]],
    [
      'brings a later expiry forward to the instant of the report',
      [{ key: PLAIN, expires: '2027-01-01T00:00:00Z' }],
    ],
  ])('%s', (_label, keys) => {
    const before = parseKeyDocument(JSON.stringify({ app: keys }));

    expect(expireKeysByDigest(before, matchDigestOf(PLAIN), NOW).document.get('app')).toEqual({
      keys: [{ stored: PLAIN, expires: '2026-03-01T12:00:00Z' }],
    });
  });

  it('changes nothing for a key not in the document', () => {
    const edit = expireKeysByDigest(DOCUMENT, matchDigestOf(generatePrefixedKey('pay')), NOW);

    expect(edit).toEqual({ document: DOCUMENT, found: [], changed: false, removedApps: [] });
  });
});

describe('removeKeysByDigest', () => {
  it('removes the key and keeps the app with its other keys and allowlist', () => {
    const edit = removeKeysByDigest(DOCUMENT, matchDigestOf(COMPACT));

    expect(edit.document.get('compact')).toEqual({
      keys: [{ stored: OTHER }],
      allowedCidrs: ['203.0.113.0/24'],
    });
    expect(edit.removedApps).toEqual([]);
  });

  it('removes an app whose only key leaked, and says so; a second removal finds nothing', () => {
    const edit = removeKeysByDigest(DOCUMENT, matchDigestOf(PLAIN));

    expect(edit.document.has('plain')).toBe(false);
    expect(edit.removedApps).toEqual(['plain']);
    expect(removeKeysByDigest(edit.document, matchDigestOf(PLAIN))).toMatchObject({
      found: [],
      changed: false,
    });
  });

  it('removes every entry of the key in one app, whatever their positions', () => {
    const twice = parseKeyDocument(JSON.stringify({ app: [PLAIN, OTHER, toCompactDigestForm(PLAIN)] }));

    expect(removeKeysByDigest(twice, matchDigestOf(PLAIN)).document.get('app')).toEqual({
      keys: [{ stored: OTHER }],
    });
  });

  it('refuses a position that holds no key', () => {
    expect(() => removeKeyAt(DOCUMENT, { appId: 'plain', keyId: 'x', position: 3 })).toThrow(
      'no key at position 4 of app plain',
    );
  });
});
