import { matchDigestOf, sha256 } from '../../../../shared/keys/key-material';
import { countKeysExpiringWithin, MalformedSecretError, parseKeyring } from '../../../../shared/keys/keyring';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

describe('parseKeyring', () => {
  it('reads a single key, a key list and a sha256 digest into digests of the real keys', () => {
    const { keyring, problems } = parseKeyring(SECRET_STRING);

    expect(problems).toEqual([]);
    expect([...keyring.keys()]).toEqual(['demo', 'partner', 'hashed']);
    expect(keyring.get('demo')?.keys.map((key) => key.digest)).toEqual([
      matchDigestOf(DEMO_KEY),
      matchDigestOf(DEMO_NEXT_KEY),
    ]);
    expect(keyring.get('partner')?.keys.map((key) => key.digest)).toEqual([matchDigestOf(PARTNER_KEY)]);
    expect(keyring.get('hashed')?.keys.map((key) => key.digest)).toEqual([matchDigestOf(HASHED_APP_KEY)]);
  });

  it('accepts upper-case hex in the sha256 form', () => {
    const upper = 'sha256:' + sha256(DEMO_KEY).toString('hex').toUpperCase();

    const { keyring } = parseKeyring(JSON.stringify({ a: upper }));

    expect(keyring.get('a')?.keys[0]?.digest).toEqual(matchDigestOf(DEMO_KEY));
  });

  it.each([
    ['a number', 42, 'key is not a string or a key object'],
    ['null', null, 'key is not a string or a key object'],
    ['a short key', 'too-short', 'key length must be 16 to 512 characters'],
    ['an overlong key', 'k'.repeat(513), 'key length must be 16 to 512 characters'],
    ['a key with a space', 'has a space in it 0123', 'key may hold only visible ASCII characters, no spaces'],
    ['a key with non-ASCII', 'clé-0123456789abcdef', 'key may hold only visible ASCII characters, no spaces'],
    ['a truncated digest', 'sha256:abcd', 'sha256: form needs exactly 64 hex characters'],
    ['a digest with non-hex', 'sha256:' + 'z'.repeat(64), 'sha256: form needs exactly 64 hex characters'],
  ])('drops %s and reports the entry, app and key position, not the value', (_label, badKey, reason) => {
    const { keyring, problems } = parseKeyring(JSON.stringify({ demo: [DEMO_KEY, badKey] }));

    expect(keyring.get('demo')?.keys.map((key) => key.digest)).toEqual([matchDigestOf(DEMO_KEY)]);
    expect(problems).toEqual([{ entryPosition: 1, appId: 'demo', keyPosition: 2, reason }]);
  });

  it('reads an app id written twice as JSON does (the last one wins), placed at its last position', () => {
    const text = `{"demo": ["short"], "partner": "${PARTNER_KEY}", "demo": ["${DEMO_KEY}", "tiny"]}`;

    const { keyring, problems } = parseKeyring(text);

    expect(keyring.get('demo')?.keys.map((key) => key.digest)).toEqual([matchDigestOf(DEMO_KEY)]);
    expect(problems).toEqual([
      {
        entryPosition: 3,
        appId: 'demo',
        keyPosition: 2,
        reason: 'key length must be 16 to 512 characters',
      },
    ]);
  });

  it('treats {} as a valid keyring with no apps', () => {
    const { keyring, problems } = parseKeyring('{}');

    expect(keyring.size).toBe(0);
    expect(problems).toEqual([]);
  });

  it.each([
    ['text that is not JSON', 'not json at all', 'secret is not valid JSON'],
    ['a JSON array', JSON.stringify([DEMO_KEY]), 'secret must be a JSON object mapping App-id to keys'],
    ['a JSON string', JSON.stringify(DEMO_KEY), 'secret must be a JSON object mapping App-id to keys'],
    ['JSON null', 'null', 'secret must be a JSON object mapping App-id to keys'],
    [
      'an object whose entries are all invalid',
      JSON.stringify({ a: 1, b: 'short' }),
      'secret has 2 app entries and none is valid',
    ],
  ])('rejects %s as a whole, without quoting it', (_label, secretString, message) => {
    const parse = (): unknown => parseKeyring(secretString);

    expect(parse).toThrow(MalformedSecretError);
    expect(parse).toThrow(message);
  });

  it('never quotes the secret in the error for invalid JSON', () => {
    const secretString = `{"demo": "${DEMO_KEY}",}`;

    expect(() => parseKeyring(secretString)).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining(DEMO_KEY) as unknown }) as Error,
    );
  });
});

describe('parseKeyring with expiries and allowlists', () => {
  it("keeps each key's expiry as an instant and each app's allowlist", () => {
    const { keyring, problems } = parseKeyring(
      JSON.stringify({
        rolling: [DEMO_KEY, { key: DEMO_NEXT_KEY, expires: '2026-12-24T00:00:00Z' }],
        fenced: { keys: [PARTNER_KEY], allowedCidrs: ['203.0.113.0/24'] },
      }),
    );

    expect(problems).toEqual([]);
    expect(keyring.get('rolling')?.keys.map((key) => key.expiresAt)).toEqual([
      undefined,
      Date.UTC(2026, 11, 24),
    ]);
    expect(keyring.get('rolling')?.allowlist).toBeUndefined();
    expect(keyring.get('fenced')?.allowlist?.allows('203.0.113.5')).toBe(true);
    expect(keyring.get('fenced')?.allowlist?.allows('198.51.100.5')).toBe(false);
  });

  it('leaves out an app whose allowlist is malformed, and serves the others', () => {
    const { keyring, problems } = parseKeyring(
      JSON.stringify({ demo: DEMO_KEY, fenced: { keys: [PARTNER_KEY], allowedCidrs: ['office'] } }),
    );

    expect([...keyring.keys()]).toEqual(['demo']);
    expect(problems).toEqual([
      {
        entryPosition: 2,
        appId: 'fenced',
        reason: '"allowedCidrs" #1: not an IPv4 or IPv6 address or CIDR block',
      },
    ]);
  });
});

describe('countKeysExpiringWithin', () => {
  const NOW = Date.UTC(2026, 11, 1);
  const DAY = 86_400_000;
  const { keyring } = parseKeyring(
    JSON.stringify({
      // Every key ends within 14 days: the app is about to lose access.
      ending: [
        { key: DEMO_KEY, expires: '2026-11-30T00:00:00Z' },
        { key: DEMO_NEXT_KEY, expires: '2026-12-01T00:00:01Z' },
        { key: PARTNER_KEY, expires: '2026-12-15T00:00:00Z' },
      ],
      // A rotation in progress: the old key ends soon, the new one lives on.
      rolling: [{ key: HASHED_APP_KEY, expires: '2026-12-03T00:00:00Z' }, 'test-forever-key-0123456789'],
      // Its last key ends after the window.
      later: [{ key: 'test-later-key-0123456789', expires: '2026-12-15T00:00:01Z' }],
    }),
  );

  it("counts the still-valid keys of apps whose every key ends within the window, the window's end included, not those of a rotation in progress", () => {
    expect(countKeysExpiringWithin(keyring, NOW, 14 * DAY)).toBe(2);
  });

  it('counts none with an empty window, and never an expired key', () => {
    expect(countKeysExpiringWithin(keyring, NOW, 0)).toBe(0);
    expect(countKeysExpiringWithin(keyring, NOW, 365 * DAY)).toBe(3);
  });
});
