import { authenticate, readCredentials } from '../../../../shared/keys/authenticate';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { toCompactDigestForm, toDigestForm } from '../../../../shared/keys/key-material';
import { SourceAllowlist } from '../../../../shared/keys/network';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

const { keyring } = parseKeyring(SECRET_STRING);
/** A request at some instant, from an address: the keys of SECRET_STRING neither expire nor are fenced. */
const FACTS = { now: Date.UTC(2026, 11, 1), sourceIp: '198.51.100.1' };

describe('readCredentials', () => {
  it.each([
    [
      'both headers once',
      ['demo'],
      [DEMO_KEY],
      { ok: true, credentials: { appId: 'demo', appKey: DEMO_KEY } },
    ],
    ['no App-id', [], [DEMO_KEY], { ok: false, reason: 'missing_app_id' }],
    ['an empty App-id', [''], [DEMO_KEY], { ok: false, reason: 'missing_app_id' }],
    ['no App-key', ['demo'], [], { ok: false, reason: 'missing_app_key' }],
    ['an empty App-key', ['demo'], [''], { ok: false, reason: 'missing_app_key' }],
    ['App-id twice', ['demo', 'demo'], [DEMO_KEY], { ok: false, reason: 'duplicate_header' }],
    [
      'App-key twice, even with a valid one',
      ['demo'],
      [DEMO_KEY, DEMO_KEY],
      { ok: false, reason: 'duplicate_header' },
    ],
  ])('with %s', (_label, appIds, appKeys, expected) => {
    expect(readCredentials(appIds, appKeys)).toEqual(expected);
  });
});

describe('authenticate', () => {
  it.each([
    ['the first of two keys', 'demo', DEMO_KEY],
    ['the second of two keys (rotation in progress)', 'demo', DEMO_NEXT_KEY],
    ['a single key', 'partner', PARTNER_KEY],
    ['a key stored only as its digest', 'hashed', HASHED_APP_KEY],
  ])('accepts %s, naming the key that matched by its id', (_label, appId, appKey) => {
    const decision = authenticate({ appId, appKey }, keyring, FACTS);

    expect(decision).toEqual({ ok: true, appId, keyId: keyIdOf(appKey) });
    expect(keyIdOf(appKey)).toMatch(/^[0-9a-f]{12}$/);
  });

  it('accepts a key stored in the compact d: form, and refuses a key differing from it', () => {
    const { keyring: compactKeyring } = parseKeyring(
      JSON.stringify({ shop: [toCompactDigestForm(PARTNER_KEY)] }),
    );

    expect(authenticate({ appId: 'shop', appKey: PARTNER_KEY }, compactKeyring, FACTS)).toEqual({
      ok: true,
      appId: 'shop',
      keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
    });
    expect(
      authenticate({ appId: 'shop', appKey: PARTNER_KEY.slice(0, -1) + 'X' }, compactKeyring, FACTS),
    ).toEqual({
      ok: false,
      reason: 'wrong_key',
    });
  });

  it.each([
    ['another app’s key', 'demo', PARTNER_KEY, 'wrong_key'],
    ['a key with one character changed', 'demo', DEMO_KEY.slice(0, -1) + 'X', 'wrong_key'],
    ['a prefix of the key', 'demo', DEMO_KEY.slice(0, 10), 'wrong_key'],
    ['the key with a trailing space', 'demo', DEMO_KEY + ' ', 'wrong_key'],
    ['the stored digest string itself', 'hashed', toDigestForm(HASHED_APP_KEY), 'wrong_key'],
    ['an unknown app with a valid key of another app', 'nobody', DEMO_KEY, 'unknown_app'],
    ['an app id differing only in case', 'DEMO', DEMO_KEY, 'unknown_app'],
  ])('refuses %s', (_label, appId, appKey, reason) => {
    expect(authenticate({ appId, appKey }, keyring, FACTS)).toEqual({ ok: false, reason });
  });

  it('refuses everything against an empty keyring', () => {
    expect(authenticate({ appId: 'demo', appKey: DEMO_KEY }, new Map(), FACTS)).toEqual({
      ok: false,
      reason: 'unknown_app',
    });
  });
});

describe('authenticate timing shape', () => {
  // Timing itself is measured by scripts/bench.ts; here we pin the structure that makes it uniform.
  const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
  const { keyring: withCompactApp } = parseKeyring(
    JSON.stringify({ ...(JSON.parse(SECRET_STRING) as object), compact: [toCompactDigestForm(PARTNER_KEY)] }),
  );

  afterEach(() => {
    jest.restoreAllMocks();
  });

  const WRONG_KEY = 'wrong-key-0123456789abcdef';

  it.each([
    ['an unknown app', 'nobody', WRONG_KEY],
    ['a wrong key for a one-key app', 'partner', WRONG_KEY],
    ['a wrong key for a two-key app', 'demo', WRONG_KEY],
    ['the right key of a one-key app', 'partner', PARTNER_KEY],
    ['the first key of a two-key app: the second is compared after the match', 'demo', DEMO_KEY],
    ['an app whose key is stored in the compact d: form', 'compact', WRONG_KEY],
  ])('compares 16-byte digests as often as the largest app has keys, for %s', (_label, appId, appKey) => {
    const compare = jest.spyOn(crypto, 'timingSafeEqual');

    authenticate({ appId, appKey }, withCompactApp, FACTS);

    expect(compare).toHaveBeenCalledTimes(2);
    for (const [stored, presented] of compare.mock.calls) {
      expect([(stored as Buffer).length, (presented as Buffer).length]).toEqual([16, 16]);
    }
  });

  it('never lets the dummy digest authenticate, even when the presented key is the dummy itself', () => {
    expect(authenticate({ appId: 'partner', appKey: 'payment-api dummy key' }, keyring, FACTS)).toEqual({
      ok: false,
      reason: 'wrong_key',
    });
    expect(authenticate({ appId: 'nobody', appKey: 'payment-api dummy key' }, keyring, FACTS)).toEqual({
      ok: false,
      reason: 'unknown_app',
    });
  });

  it.each([
    ['its right key', PARTNER_KEY, 'source_not_allowed'],
    ['a wrong key', WRONG_KEY, 'wrong_key'],
  ])(
    'checks a fenced app’s network once for %s, so the check’s cost says nothing of the key',
    (_label, appKey, reason) => {
      const { keyring: fenced } = parseKeyring(
        JSON.stringify({ fenced: { keys: [PARTNER_KEY], allowedCidrs: ['203.0.113.0/24'] } }),
      );
      const allows = jest.spyOn(SourceAllowlist.prototype, 'allows');

      const decision = authenticate({ appId: 'fenced', appKey }, fenced, FACTS);

      expect(decision).toMatchObject({ ok: false, reason });
      expect(allows).toHaveBeenCalledTimes(1);
    },
  );
});

describe('authenticate with expiring keys and allowed networks', () => {
  const NOW = Date.UTC(2026, 11, 24, 12);
  const { keyring: rules } = parseKeyring(
    JSON.stringify({
      rolling: [
        { key: DEMO_KEY, expires: '2026-12-24T12:00:00Z' },
        { key: DEMO_NEXT_KEY, expires: '2026-12-24T12:00:01Z' },
      ],
      fenced: { keys: [PARTNER_KEY], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
      closed: { keys: [HASHED_APP_KEY], allowedCidrs: [] },
      expiredAndFenced: {
        keys: [{ key: PARTNER_KEY, expires: '2026-01-01T00:00:00Z' }],
        allowedCidrs: ['203.0.113.0/24'],
      },
    }),
  );
  const idOf = (appId: string, position: number): string | undefined => rules.get(appId)?.keys[position]?.id;
  const accepted = (appId: string, position = 0) => ({ ok: true, appId, keyId: idOf(appId, position) });
  const refused = (reason: string, appId: string) => ({ ok: false, reason, appId, keyId: idOf(appId, 0) });
  const fencedOut = (appId: string) => refused('source_not_allowed', appId);
  const OUT = '198.51.100.1';

  it.each<[string, string, string, string | undefined, object, number?]>([
    ['a key from the instant it expires', 'rolling', DEMO_KEY, OUT, refused('expired_key', 'rolling')],
    ['a key until then, by the clock of the request', 'rolling', DEMO_KEY, OUT, accepted('rolling'), NOW - 1],
    ['the next key, which expires a second later', 'rolling', DEMO_NEXT_KEY, OUT, accepted('rolling', 1)],
    ['the right key from inside an IPv4 block', 'fenced', PARTNER_KEY, '203.0.113.200', accepted('fenced')],
    ['the right key from outside its blocks', 'fenced', PARTNER_KEY, OUT, fencedOut('fenced')],
    ['the right key from an unknown address', 'fenced', PARTNER_KEY, undefined, fencedOut('fenced')],
    ['any address, the allowlist empty', 'closed', HASHED_APP_KEY, '203.0.113.1', fencedOut('closed')],
    // The network is judged only for a key that matched.
    ['a wrong key from outside: wrong_key', 'fenced', DEMO_KEY, OUT, { ok: false, reason: 'wrong_key' }],
    [
      'expired_key before source_not_allowed',
      'expiredAndFenced',
      PARTNER_KEY,
      OUT,
      refused('expired_key', 'expiredAndFenced'),
    ],
  ])('judges %s, naming the app and the key', (_label, appId, appKey, sourceIp, decision, now = NOW) => {
    expect(authenticate({ appId, appKey }, rules, { now, sourceIp })).toEqual(decision);
  });
});
