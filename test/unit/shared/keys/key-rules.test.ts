import { authenticate } from '../../../../shared/keys/authenticate';
import {
  KeyDocumentError,
  parseKeyDocument,
  serializeKeyDocument,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
import { keyIdFromDigest, sha256 } from '../../../../shared/keys/key-material';
import {
  allowAnyNetwork,
  allowCidrs,
  disallowCidrs,
  limitOtherKeysExpiry,
  pruneExpiredKeys,
  setKeyExpiry,
  setRateLimit,
  useDefaultRateLimit,
} from '../../../../shared/keys/key-rules';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';

const NOW = Date.UTC(2026, 11, 1);
const DAY = 86_400_000;
const id = (key: string): string => keyIdFromDigest(sha256(key));
const document = (secret: Record<string, unknown>): KeyDocument => parseKeyDocument(JSON.stringify(secret));

function expectDocumentError(action: () => unknown, message: string): void {
  expect(action).toThrow(new KeyDocumentError(message));
}

describe('setKeyExpiry (expire)', () => {
  it("sets one key's expiry in UTC, leaving the other keys as they were", () => {
    const after = setKeyExpiry(
      document({ demo: [DEMO_KEY, DEMO_NEXT_KEY] }),
      'demo',
      id(DEMO_KEY),
      NOW + DAY,
    );

    expect(after.get('demo')?.keys).toEqual([
      { stored: DEMO_KEY, expires: '2026-12-02T00:00:00Z' },
      { stored: DEMO_NEXT_KEY },
    ]);
  });

  it('clears an expiry with undefined (--never)', () => {
    const before = document({ demo: [{ key: DEMO_KEY, expires: '2026-12-24T00:00:00Z' }] });

    expect(setKeyExpiry(before, 'demo', id(DEMO_KEY), undefined).get('demo')?.keys).toEqual([
      { stored: DEMO_KEY },
    ]);
  });

  it.each([
    ['an unknown app', 'ghost', id(DEMO_KEY), 'unknown app: ghost'],
    ['an unknown key', 'demo', '000000000000', 'app demo has no key 000000000000'],
    [
      'a key where the key id belongs',
      'demo',
      DEMO_KEY,
      'invalid key id: expected the 12 hex characters that "list" shows, not a key',
    ],
  ])('refuses %s', (_label, appId, keyId, message) => {
    expectDocumentError(() => setKeyExpiry(document({ demo: [DEMO_KEY] }), appId, keyId, NOW), message);
  });
});

describe('limitOtherKeysExpiry (rotate --grace)', () => {
  it('expires every other key at the earlier of its own expiry and the grace', () => {
    const before = document({
      demo: [
        DEMO_KEY,
        { key: PARTNER_KEY, expires: '2026-12-01T06:00:00+01:00' },
        { key: 'test-far-key-0123456789abcdef', expires: '2027-06-01T00:00:00Z' },
        DEMO_NEXT_KEY,
      ],
    });

    const after = limitOtherKeysExpiry(before, 'demo', id(DEMO_NEXT_KEY), NOW + 7 * DAY);

    expect(after.get('demo')?.keys).toEqual([
      { stored: DEMO_KEY, expires: '2026-12-08T00:00:00Z' },
      { stored: PARTNER_KEY, expires: '2026-12-01T06:00:00+01:00' },
      { stored: 'test-far-key-0123456789abcdef', expires: '2026-12-08T00:00:00Z' },
      { stored: DEMO_NEXT_KEY },
    ]);
  });

  it('with a grace of 0 s, expires the other keys at once but keeps them listed', () => {
    const after = limitOtherKeysExpiry(
      document({ demo: [DEMO_KEY, DEMO_NEXT_KEY] }),
      'demo',
      id(DEMO_NEXT_KEY),
      NOW,
    );

    expect(after.get('demo')?.keys.map((key) => key.stored)).toEqual([DEMO_KEY, DEMO_NEXT_KEY]);
    const { keyring } = parseKeyring(serializeKeyDocument(after));
    expect(
      authenticate({ appId: 'demo', appKey: DEMO_KEY }, keyring, { now: NOW, sourceIp: undefined }),
    ).toMatchObject({
      ok: false,
      reason: 'expired_key',
    });
  });
});

describe('pruneExpiredKeys (prune)', () => {
  const before = document({
    demo: [{ key: DEMO_KEY, expires: '2026-11-30T00:00:00Z' }, DEMO_NEXT_KEY],
    gone: [{ key: PARTNER_KEY, expires: '2026-12-01T00:00:00Z' }],
    fresh: [{ key: 'test-fresh-key-0123456789abcdef', expires: '2026-12-01T00:00:00.001Z' }],
  });

  it('removes the keys whose expiry has passed, and an app left without keys, saying which', () => {
    const result = pruneExpiredKeys(before, NOW);

    expect(result.removed).toEqual([
      { appId: 'demo', keyId: id(DEMO_KEY) },
      { appId: 'gone', keyId: id(PARTNER_KEY) },
    ]);
    expect(result.removedApps).toEqual(['gone']);
    expect([...result.document.keys()].sort()).toEqual(['demo', 'fresh']);
    expect(result.document.get('demo')?.keys).toEqual([{ stored: DEMO_NEXT_KEY }]);
  });

  it('prunes one app only when asked', () => {
    const result = pruneExpiredKeys(before, NOW, 'demo');

    expect(result.removed).toEqual([{ appId: 'demo', keyId: id(DEMO_KEY) }]);
    expect(result.document.has('gone')).toBe(true);
  });

  it('changes nothing when nothing has expired', () => {
    const result = pruneExpiredKeys(before, NOW - 2 * DAY);

    expect(result.removed).toEqual([]);
    expect(result.document).toEqual(before);
  });
});

describe('allowCidrs, disallowCidrs and allowAnyNetwork (allow, disallow, allow --any)', () => {
  it('creates the allowlist, and adds only blocks it does not have (however written)', () => {
    const once = allowCidrs(document({ shop: [DEMO_KEY] }), 'shop', ['203.0.113.0/24', '2001:db8::/32']);

    const twice = allowCidrs(once, 'shop', ['2001:DB8:0::/32', '198.51.100.7']);

    expect(twice.get('shop')).toEqual({
      keys: [{ stored: DEMO_KEY }],
      allowedCidrs: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'],
    });
    expect(serializeKeyDocument(twice)).toBe(
      `{"shop":{"keys":["${DEMO_KEY}"],"allowedCidrs":["203.0.113.0/24","2001:db8::/32","198.51.100.7"]}}`,
    );
  });

  it('removes blocks, and leaves an empty allowlist (no network) when the last goes', () => {
    const fenced = document({
      shop: { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
    });

    const narrower = disallowCidrs(fenced, 'shop', ['2001:db8::/32']);
    const closed = disallowCidrs(narrower, 'shop', ['203.0.113.0/24']);

    expect(narrower.get('shop')?.allowedCidrs).toEqual(['203.0.113.0/24']);
    expect(closed.get('shop')?.allowedCidrs).toEqual([]);
  });

  it('removes the allowlist itself with allowAnyNetwork', () => {
    const fenced = document({ shop: { keys: [DEMO_KEY], allowedCidrs: [] } });

    expect(allowAnyNetwork(fenced, 'shop').get('shop')).toEqual({ keys: [{ stored: DEMO_KEY }] });
    expect(serializeKeyDocument(allowAnyNetwork(fenced, 'shop'))).toBe(`{"shop":["${DEMO_KEY}"]}`);
  });

  it.each([
    [
      'an invalid block, by position',
      () => allowCidrs(document({ shop: [DEMO_KEY] }), 'shop', ['203.0.113.0/24', '203.0.113.7/24']),
      'CIDR block #2 is not valid: host bits are set: give the network address of the block',
    ],
    [
      'no block at all',
      () => allowCidrs(document({ shop: [DEMO_KEY] }), 'shop', []),
      'give at least one CIDR block',
    ],
    [
      'a block the app does not allow',
      () =>
        disallowCidrs(document({ shop: { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/24'] } }), 'shop', [
          '198.51.100.0/24',
        ]),
      'CIDR block #1 is not in the allowlist of app shop',
    ],
    [
      'disallowing without an allowlist',
      () => disallowCidrs(document({ shop: [DEMO_KEY] }), 'shop', ['198.51.100.0/24']),
      'app shop has no allowlist: it may call from any network',
    ],
    [
      'an unknown app',
      () => allowCidrs(document({ shop: [DEMO_KEY] }), 'ghost', ['198.51.100.0/24']),
      'unknown app: ghost',
    ],
  ])('refuses %s, changing nothing', (_label, edit, message) => {
    expectDocumentError(edit, message);
  });
});

describe('setRateLimit and useDefaultRateLimit (limit)', () => {
  it('gives the app a limit of its own, written as given, and serves it in the keyring', () => {
    const after = setRateLimit(document({ shop: [DEMO_KEY] }), 'shop', { perSecond: 20 });

    expect(serializeKeyDocument(after)).toBe(
      `{"shop":{"keys":["${DEMO_KEY}"],"rateLimit":{"perSecond":20}}}`,
    );
    expect(parseKeyring(serializeKeyDocument(after)).keyring.get('shop')?.rateLimit).toEqual({
      perSecond: 20,
      burst: 20,
    });
  });

  it('replaces a limit, keeping the allowlist', () => {
    const before = document({ shop: { keys: [DEMO_KEY], allowedCidrs: [], rateLimit: { perSecond: 1 } } });

    expect(setRateLimit(before, 'shop', { perSecond: 5, burst: 10 }).get('shop')).toEqual({
      keys: [{ stored: DEMO_KEY }],
      allowedCidrs: [],
      rateLimit: { perSecond: 5, burst: 10 },
    });
  });

  it("goes back to the stack's default, writing a plain key list when nothing else is set", () => {
    const before = document({ shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 1 } } });

    expect(serializeKeyDocument(useDefaultRateLimit(before, 'shop'))).toBe(`{"shop":["${DEMO_KEY}"]}`);
  });

  it('refuses a limit the secret could not hold, changing nothing', () => {
    expectDocumentError(
      () => setRateLimit(document({ shop: [DEMO_KEY] }), 'shop', { perSecond: 5, burst: 0 }),
      '"rateLimit"."burst" must be a whole number of requests from 1 to 100000',
    );
  });
});
