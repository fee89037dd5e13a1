import { keyIdFromDigest, sha256, toDigestForm } from '../../lambda/keys/key-material';
import { MalformedSecretError, parseKeyring } from '../../lambda/keys/keyring';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY, SECRET_STRING } from '../support/keys';

describe('parseKeyring', () => {
  it('reads a single key, a key list and a sha256 digest into digests of the real keys', () => {
    const { keyring, problems } = parseKeyring(SECRET_STRING);

    expect(problems).toEqual([]);
    expect([...keyring.keys()]).toEqual(['demo', 'partner', 'hashed']);
    expect(keyring.get('demo')?.map((key) => key.digest)).toEqual([sha256(DEMO_KEY), sha256(DEMO_NEXT_KEY)]);
    expect(keyring.get('partner')?.map((key) => key.digest)).toEqual([sha256(PARTNER_KEY)]);
    expect(keyring.get('hashed')?.map((key) => key.digest)).toEqual([sha256(HASHED_APP_KEY)]);
  });

  it('gives a key and its sha256 form the same non-secret key id', () => {
    const plain = parseKeyring(JSON.stringify({ a: DEMO_KEY })).keyring.get('a')?.[0];
    const hashed = parseKeyring(JSON.stringify({ a: toDigestForm(DEMO_KEY) })).keyring.get('a')?.[0];

    expect(plain?.id).toBe(hashed?.id);
    expect(plain?.id).toBe(keyIdFromDigest(sha256(DEMO_KEY)));
    expect(plain?.id).toMatch(/^[0-9a-f]{12}$/);
    expect(plain?.id).not.toContain(DEMO_KEY);
  });

  it('accepts upper-case hex in the sha256 form', () => {
    const upper = 'sha256:' + sha256(DEMO_KEY).toString('hex').toUpperCase();

    const { keyring } = parseKeyring(JSON.stringify({ a: upper }));

    expect(keyring.get('a')?.[0]?.digest).toEqual(sha256(DEMO_KEY));
  });

  it.each([
    ['a number', 42, 'key is not a string'],
    ['null', null, 'key is not a string'],
    ['a short key', 'too-short', 'key length must be 16 to 512 characters'],
    ['an overlong key', 'k'.repeat(513), 'key length must be 16 to 512 characters'],
    ['a key with a space', 'has a space in it 0123', 'key may hold only visible ASCII characters, no spaces'],
    ['a key with non-ASCII', 'clé-0123456789abcdef', 'key may hold only visible ASCII characters, no spaces'],
    ['a truncated digest', 'sha256:abcd', 'sha256: form needs exactly 64 hex characters'],
    ['a digest with non-hex', 'sha256:' + 'z'.repeat(64), 'sha256: form needs exactly 64 hex characters'],
  ])('drops %s and reports the app and key position, not the value', (_label, badKey, reason) => {
    const { keyring, problems } = parseKeyring(JSON.stringify({ demo: [DEMO_KEY, badKey] }));

    expect(keyring.get('demo')?.map((key) => key.digest)).toEqual([sha256(DEMO_KEY)]);
    expect(problems).toEqual([{ appId: 'demo', keyIndex: 1, reason }]);
  });

  it('drops an app whose key list is empty or whose id is outside the alphabet, keeping the rest', () => {
    const { keyring, problems } = parseKeyring(
      JSON.stringify({ demo: DEMO_KEY, empty: [], 'bad app!': PARTNER_KEY, ['x'.repeat(65)]: PARTNER_KEY }),
    );

    expect([...keyring.keys()]).toEqual(['demo']);
    expect(problems).toEqual([
      { appId: 'empty', reason: 'app has an empty key list' },
      {
        appId: '<invalid app id of 8 characters>',
        reason: 'app id is outside the allowed alphabet or length',
      },
      {
        appId: '<invalid app id of 65 characters>',
        reason: 'app id is outside the allowed alphabet or length',
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
