import { authenticate, readCredentials } from '../../../../shared/keys/authenticate';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

const { keyring } = parseKeyring(SECRET_STRING);

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
  ])('accepts %s', (_label, appId, appKey) => {
    const decision = authenticate({ appId, appKey }, keyring);

    expect(decision).toEqual({ ok: true, appId, keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown });
  });

  it('names the key that matched by its id', () => {
    const first = authenticate({ appId: 'demo', appKey: DEMO_KEY }, keyring);
    const second = authenticate({ appId: 'demo', appKey: DEMO_NEXT_KEY }, keyring);

    expect(first.ok && second.ok && first.keyId !== second.keyId).toBe(true);
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
    expect(authenticate({ appId, appKey }, keyring)).toEqual({ ok: false, reason });
  });

  it('refuses everything against an empty keyring', () => {
    expect(authenticate({ appId: 'demo', appKey: DEMO_KEY }, new Map())).toEqual({
      ok: false,
      reason: 'unknown_app',
    });
  });
});

describe('authenticate timing shape', () => {
  // Timing itself is measured by scripts/bench.ts; here we pin the structure that makes it uniform.
  const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');

  afterEach(() => {
    jest.restoreAllMocks();
  });

  it.each([
    ['an unknown app', 'nobody'],
    ['a wrong key for a one-key app', 'partner'],
    ['a wrong key for a two-key app', 'demo'],
    ['the right key of a one-key app', 'partner'],
  ])('compares 32-byte digests as often as the largest app has keys, for %s', (_label, appId) => {
    const compare = jest.spyOn(crypto, 'timingSafeEqual');

    authenticate({ appId, appKey: 'wrong-key-0123456789abcdef' }, keyring);

    expect(compare).toHaveBeenCalledTimes(2);
    for (const [stored, presented] of compare.mock.calls) {
      expect([(stored as Buffer).length, (presented as Buffer).length]).toEqual([32, 32]);
    }
  });

  it('never lets the dummy digest authenticate, even when the presented key is the dummy itself', () => {
    expect(authenticate({ appId: 'partner', appKey: 'payment-api dummy key' }, keyring)).toEqual({
      ok: false,
      reason: 'wrong_key',
    });
    expect(authenticate({ appId: 'nobody', appKey: 'payment-api dummy key' }, keyring)).toEqual({
      ok: false,
      reason: 'unknown_app',
    });
  });

  it('compares against every key of the app even after a match', () => {
    const compare = jest.spyOn(crypto, 'timingSafeEqual');

    authenticate({ appId: 'demo', appKey: DEMO_KEY }, keyring);

    expect(compare).toHaveBeenCalledTimes(2);
  });
});
