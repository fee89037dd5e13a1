import { authenticate } from '../../../../shared/keys/authenticate';
import {
  addApp,
  addKey,
  keyIdOf,
  KeyDocumentError,
  listApps,
  parseKeyDocument,
  removeApp,
  revokeKey,
  serializeKeyDocument,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
import { generateKey, keyIdFromDigest, sha256, toDigestForm } from '../../../../shared/keys/key-material';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

/** Shaped like a generated key, as an operator might paste one where the app id belongs. */
const GENERATED_LOOKALIKE = 'payk_' + 'L'.repeat(43);

const document = (entries: Record<string, string[]>): KeyDocument =>
  new Map(
    Object.entries(entries).map(([appId, keys]) => [appId, { keys: keys.map((stored) => ({ stored })) }]),
  );
/** The stored keys of one app, oldest first. */
const storedKeys = (doc: KeyDocument, appId: string): string[] | undefined =>
  doc.get(appId)?.keys.map((key) => key.stored);
const FACTS = { now: 0, sourceIp: undefined };
const id = (key: string): string => keyIdFromDigest(sha256(key));

function expectDocumentError(action: () => unknown, message: string): void {
  expect(action).toThrow(KeyDocumentError);
  expect(action).toThrow(new KeyDocumentError(message));
}

describe('parseKeyDocument', () => {
  it('reads a single key, a key list and a digest, keeping each stored form and their order', () => {
    const parsed = parseKeyDocument(SECRET_STRING);

    expect([...parsed.entries()]).toEqual([
      ['demo', { keys: [{ stored: DEMO_KEY }, { stored: DEMO_NEXT_KEY }] }],
      ['partner', { keys: [{ stored: PARTNER_KEY }] }],
      ['hashed', { keys: [{ stored: toDigestForm(HASHED_APP_KEY) }] }],
    ]);
  });

  it('accepts an empty object as a document without apps', () => {
    expect(parseKeyDocument('{}').size).toBe(0);
  });

  it.each([
    ['text that is not JSON', `{"demo": "${DEMO_KEY}"`, 'the secret is not valid JSON'],
    ['a JSON array', `["${DEMO_KEY}"]`, 'the secret must be a JSON object mapping App-id to keys'],
    ['JSON null', 'null', 'the secret must be a JSON object mapping App-id to keys'],
    [
      'an app id outside the alphabet',
      JSON.stringify({ partner: PARTNER_KEY, 'bad app': DEMO_KEY }),
      "the secret's entry #2: app id is outside the allowed alphabet or length",
    ],
    [
      'a generated key pasted as an app id',
      JSON.stringify({ [GENERATED_LOOKALIKE]: [DEMO_KEY] }),
      "the secret's entry #1: app id starts with payk_, like a generated key (a pasted key?)",
    ],
    ['an empty key list', JSON.stringify({ demo: [] }), "the secret's entry #1: app has an empty key list"],
    [
      'a short key',
      JSON.stringify({ partner: PARTNER_KEY, demo: [DEMO_KEY, 'short'] }),
      "the secret's entry #2, key #2: key length must be 16 to 512 characters",
    ],
    [
      'an app id written twice, which JSON.parse would quietly reduce to the last',
      `{"demo": ["${DEMO_KEY}"], "partner": ["${PARTNER_KEY}"], "demo": ["${DEMO_NEXT_KEY}"]}`,
      "the secret's entry #3 repeats the id of app demo named earlier; merge the two entries by hand",
    ],
  ])('refuses %s, where parseKeyring would skip it, and never quotes a key', (_label, text, message) => {
    expectDocumentError(() => parseKeyDocument(text), message);
    expect(message).not.toContain(DEMO_KEY);
    expect(message).not.toContain(GENERATED_LOOKALIKE.slice(5));
  });
});

describe('serializeKeyDocument', () => {
  it('writes compact JSON, every app as a list, sorted by app id', () => {
    const text = serializeKeyDocument(document({ zeta: [PARTNER_KEY], alpha: [DEMO_KEY, DEMO_NEXT_KEY] }));

    expect(text).toBe(`{"alpha":["${DEMO_KEY}","${DEMO_NEXT_KEY}"],"zeta":["${PARTNER_KEY}"]}`);
  });

  it('round-trips through parseKeyDocument and parses as a keyring with every key', () => {
    const original = parseKeyDocument(SECRET_STRING);

    const text = serializeKeyDocument(original);

    expect(parseKeyDocument(text)).toEqual(original);
    const { keyring, problems } = parseKeyring(text);
    expect(problems).toEqual([]);
    expect(keyring.get('demo')?.keys.map((key) => key.id)).toEqual([id(DEMO_KEY), id(DEMO_NEXT_KEY)]);
  });
});

describe('keyIdOf and listApps', () => {
  it('gives a key and its sha256 form the same 12-hex key id, which does not reveal the key', () => {
    expect(keyIdOf(DEMO_KEY)).toBe(keyIdOf(toDigestForm(DEMO_KEY)));
    expect(keyIdOf(DEMO_KEY)).toMatch(/^[0-9a-f]{12}$/);
    expect(toDigestForm(DEMO_KEY)).not.toContain(keyIdOf(DEMO_KEY));
  });

  it('refuses a malformed stored key without quoting it', () => {
    expectDocumentError(
      () => keyIdOf('short'),
      'stored key is malformed: key length must be 16 to 512 characters',
    );
  });

  it('lists apps sorted by id with their key ids oldest first, never a key', () => {
    const listed = listApps(parseKeyDocument(SECRET_STRING));

    expect(listed).toEqual([
      {
        appId: 'demo',
        keys: [
          { keyId: id(DEMO_KEY), digest: false },
          { keyId: id(DEMO_NEXT_KEY), digest: false },
        ],
      },
      { appId: 'hashed', keys: [{ keyId: id(HASHED_APP_KEY), digest: true }] },
      { appId: 'partner', keys: [{ keyId: id(PARTNER_KEY), digest: false }] },
    ]);
    expect(JSON.stringify(listed)).not.toMatch(/test-|sha256:/);
  });
});

describe('addApp', () => {
  it('adds an app with one key and leaves the input document unchanged', () => {
    const before = document({ partner: [PARTNER_KEY] });

    const after = addApp(before, 'demo', { stored: DEMO_KEY });

    expect(storedKeys(after, 'demo')).toEqual([DEMO_KEY]);
    expect(storedKeys(after, 'partner')).toEqual([PARTNER_KEY]);
    expect(before.has('demo')).toBe(false);
  });

  it.each([
    [
      'an app id outside the alphabet',
      'demo app',
      DEMO_KEY,
      'invalid app id: must be 1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      'a generated key as the app id',
      GENERATED_LOOKALIKE,
      DEMO_KEY,
      'invalid app id: must not start with "payk_" (in any case), the prefix of generated keys',
    ],
    ['an existing app', 'partner', DEMO_KEY, 'app already exists: partner'],
    [
      'a malformed key',
      'demo',
      'sha256:00',
      'stored key is malformed: sha256: form needs exactly 64 hex characters',
    ],
  ])('refuses %s', (_label, appId, key, message) => {
    expectDocumentError(() => addApp(document({ partner: [PARTNER_KEY] }), appId, { stored: key }), message);
  });
});

describe('addKey (rotate)', () => {
  it('appends the new key after the existing ones, which stay valid', () => {
    const after = addKey(document({ demo: [DEMO_KEY] }), 'demo', { stored: DEMO_NEXT_KEY });

    expect(storedKeys(after, 'demo')).toEqual([DEMO_KEY, DEMO_NEXT_KEY]);
    const { keyring } = parseKeyring(serializeKeyDocument(after));
    expect(authenticate({ appId: 'demo', appKey: DEMO_KEY }, keyring, FACTS)).toEqual({
      ok: true,
      appId: 'demo',
      keyId: id(DEMO_KEY),
    });
    expect(authenticate({ appId: 'demo', appKey: DEMO_NEXT_KEY }, keyring, FACTS)).toEqual({
      ok: true,
      appId: 'demo',
      keyId: id(DEMO_NEXT_KEY),
    });
  });

  it('stores only the digest for --hash, which still authenticates the key and shares its key id', () => {
    const key = generateKey();

    const after = addKey(document({ demo: [DEMO_KEY] }), 'demo', { stored: toDigestForm(key) });

    const stored = storedKeys(after, 'demo')?.[1] ?? '';
    expect(stored).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(serializeKeyDocument(after)).not.toContain(key);
    const { keyring } = parseKeyring(serializeKeyDocument(after));
    expect(authenticate({ appId: 'demo', appKey: key }, keyring, FACTS)).toEqual({
      ok: true,
      appId: 'demo',
      keyId: keyIdOf(key),
    });
    expect(keyIdOf(stored)).toBe(keyIdOf(key));
  });

  it.each([
    ['an unknown app', 'ghost', DEMO_NEXT_KEY, 'unknown app: ghost'],
    [
      'an app id that is a pasted key',
      GENERATED_LOOKALIKE,
      DEMO_NEXT_KEY,
      'unknown app: its id is not valid',
    ],
    ['a key the app already has', 'demo', DEMO_KEY, `app demo already has key ${id(DEMO_KEY)}`],
    [
      'the digest of a key the app already has',
      'demo',
      toDigestForm(DEMO_KEY),
      `app demo already has key ${id(DEMO_KEY)}`,
    ],
  ])('refuses %s', (_label, appId, key, message) => {
    expectDocumentError(() => addKey(document({ demo: [DEMO_KEY] }), appId, { stored: key }), message);
  });
});

describe('revokeKey', () => {
  it.each([
    ['as written', [DEMO_KEY, DEMO_NEXT_KEY]],
    ['stored as its digest, by the same key id', [toDigestForm(DEMO_KEY), DEMO_NEXT_KEY]],
  ])('removes the named key, %s, and keeps the others', (_label, keys) => {
    const after = revokeKey(document({ demo: keys }), 'demo', id(DEMO_KEY));

    expect(storedKeys(after, 'demo')).toEqual([DEMO_NEXT_KEY]);
    const { keyring } = parseKeyring(serializeKeyDocument(after));
    expect(authenticate({ appId: 'demo', appKey: DEMO_KEY }, keyring, FACTS)).toEqual({
      ok: false,
      reason: 'wrong_key',
    });
  });

  it('removes the last key, and with it the app, only with force', () => {
    const before = document({ demo: [DEMO_KEY], partner: [PARTNER_KEY] });

    const after = revokeKey(before, 'demo', id(DEMO_KEY), { force: true });

    expect([...after.keys()]).toEqual(['partner']);
  });

  it.each([
    ['an unknown app', 'ghost', id(DEMO_KEY), {}, 'unknown app: ghost'],
    ['an unknown key id', 'demo', '000000000000', {}, 'app demo has no key 000000000000'],
    [
      'a pasted key where the key id belongs',
      'demo',
      GENERATED_LOOKALIKE,
      {},
      'invalid key id: expected the 12 hex characters that "list" shows, not a key',
    ],
    [
      'the last key without force',
      'partner',
      id(PARTNER_KEY),
      {},
      `key ${id(PARTNER_KEY)} is the last key of app partner; use --force to remove it`,
    ],
    [
      'the last key with force: false',
      'partner',
      id(PARTNER_KEY),
      { force: false },
      `key ${id(PARTNER_KEY)} is the last key of app partner; use --force to remove it`,
    ],
  ])('refuses %s', (_label, appId, keyId, options, message) => {
    const before = document({ demo: [DEMO_KEY, DEMO_NEXT_KEY], partner: [PARTNER_KEY] });

    expectDocumentError(() => revokeKey(before, appId, keyId, options), message);
  });
});

describe('removeApp', () => {
  it('removes the app and all its keys, leaving the others', () => {
    const after = removeApp(document({ demo: [DEMO_KEY, DEMO_NEXT_KEY], partner: [PARTNER_KEY] }), 'demo');

    expect([...after.keys()]).toEqual(['partner']);
    expect(storedKeys(after, 'partner')).toEqual([PARTNER_KEY]);
  });

  it('refuses an unknown app', () => {
    expectDocumentError(() => removeApp(document({ demo: [DEMO_KEY] }), 'ghost'), 'unknown app: ghost');
  });

  it('leaves an empty document that still parses as a keyring', () => {
    const after = removeApp(document({ demo: [DEMO_KEY] }), 'demo');

    expect(serializeKeyDocument(after)).toBe('{}');
    expect(parseKeyring(serializeKeyDocument(after)).keyring.size).toBe(0);
  });
});
