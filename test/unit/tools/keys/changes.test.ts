import {
  expireChange,
  freshKey,
  limitChange,
  networkChange,
  newKeyChange,
  pruneChange,
  type EditResult,
  type KeyStorage,
  type NetworkChange,
  type NewKeyRequest,
} from '../../../../tools/keys/changes';
import type { Change } from '../../../../tools/keys/engine';
import { formatList, formatListJson, formatResult, formatResultJson } from '../../../../tools/keys/output';
import {
  keyIdOf,
  listApps,
  serializeKeyDocument,
  type DocumentApp,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
import { toCompactDigestForm, toDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY, HASHED_APP_KEY, PARTNER_KEY } from '../../../support/keys';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const NEW_KEY = 'payk_' + 'N'.repeat(43);
const DIGEST = toDigestForm(HASHED_APP_KEY);

const documentOf = (apps: Record<string, DocumentApp>): KeyDocument => new Map(Object.entries(apps));

function apply<Result extends EditResult>(
  change: Change<Result>,
  document: KeyDocument,
  isRetry = false,
): { readonly next: KeyDocument | undefined; readonly result: Result } {
  return change(document, { isRetry });
}

/** The id of NEW_KEY stored as its compact digest, the default. */
const NEW_ID = keyIdOf(toCompactDigestForm(NEW_KEY));

/** NEW_KEY made for `appId` by add-app or rotate at NOW, stored as `storage` says. */
const newKey = (
  command: NewKeyRequest['command'],
  appId: string,
  options: Partial<Pick<NewKeyRequest, 'expiresAt' | 'othersExpireBy'>> & { storage?: KeyStorage } = {},
) => {
  const { storage, ...expiries } = options;
  return newKeyChange({ command, appId, fresh: freshKey(NEW_KEY, storage), now: NOW, ...expiries });
};

const DEMO_APP: DocumentApp = { keys: [{ stored: DEMO_KEY }, { stored: DEMO_NEXT_KEY }] };
const DEMO = documentOf({ demo: DEMO_APP });

describe('add-app and rotate with expiries', () => {
  it('add-app --expires-in stores the new key with its expiry and says when it expires', () => {
    const { next, result } = apply(newKey('add-app', 'shop', { expiresAt: NOW + 90 * DAY }), new Map());

    expect(next?.get('shop')).toEqual({
      keys: [{ stored: toCompactDigestForm(NEW_KEY), expires: '2026-08-30T12:00:00Z' }],
    });
    expect(formatResult(result, NOW)).toBe(
      `${NEW_KEY}\napp shop: created with key ${NEW_ID}, expiring 2026-08-30T12:00:00Z; ` +
        'the key above is shown only this once\n',
    );
  });

  it('rotate --grace limits every other key to now + grace and keeps an earlier expiry as it was', () => {
    const document = documentOf({
      demo: { keys: [{ stored: DEMO_KEY, expires: '2026-06-02T00:00:00Z' }, { stored: DEMO_NEXT_KEY }] },
    });

    const { next, result } = apply(
      newKey('rotate', 'demo', { storage: 'plain', othersExpireBy: NOW + 7 * DAY }),
      document,
    );

    expect(next?.get('demo')?.keys).toEqual([
      { stored: DEMO_KEY, expires: '2026-06-02T00:00:00Z' },
      { stored: DEMO_NEXT_KEY, expires: '2026-06-08T12:00:00Z' },
      { stored: NEW_KEY },
    ]);
    const ids = [DEMO_KEY, DEMO_NEXT_KEY, NEW_KEY].map(keyIdOf).join(' ');
    expect(formatResult(result, NOW)).toBe(
      `${NEW_KEY}\napp demo: added key ${keyIdOf(NEW_KEY)} (stored in plain text: --plain); valid keys: ${ids}; ` +
        'every other key expires by ' +
        '2026-06-08T12:00:00Z; the key above is shown only this once\n',
    );
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual({
      appId: 'demo',
      keyId: keyIdOf(NEW_KEY),
      key: NEW_KEY,
      othersExpireBy: '2026-06-08T12:00:00Z',
    });
  });

  it('rotate --grace 0s expires every other key at once but keeps them, and names only the new key valid', () => {
    const { next, result } = apply(
      newKey('rotate', 'demo', { expiresAt: NOW + 30 * DAY, othersExpireBy: NOW }),
      DEMO,
    );

    expect(next?.get('demo')?.keys).toEqual([
      { stored: DEMO_KEY, expires: '2026-06-01T12:00:00Z' },
      { stored: DEMO_NEXT_KEY, expires: '2026-06-01T12:00:00Z' },
      { stored: toCompactDigestForm(NEW_KEY), expires: '2026-07-01T12:00:00Z' },
    ]);
    const newId = keyIdOf(toCompactDigestForm(NEW_KEY));
    expect(formatResult(result, NOW)).toBe(
      `${NEW_KEY}\napp demo: added key ${newId}, expiring ` +
        `2026-07-01T12:00:00Z; valid keys: ${newId}; every other key has expired (list still shows ` +
        'them; prune removes them); the key above is shown only this once\n',
    );
  });

  it('on a retry that finds its own key stored, writes nothing and reports the stored state', () => {
    const rotate = () => newKey('rotate', 'demo', { storage: 'plain', othersExpireBy: NOW + DAY });
    const landed = apply(rotate(), DEMO).next ?? DEMO;

    const { next, result } = apply(rotate(), landed, true);

    expect(next).toBeUndefined();
    expect(result).toMatchObject({ keyIds: [DEMO_KEY, DEMO_NEXT_KEY, NEW_KEY].map(keyIdOf) });
  });
});

describe('expire', () => {
  it('sets an expiry', () => {
    const { next } = apply(expireChange('demo', keyIdOf(DEMO_KEY), NOW + 3 * DAY + 5 * HOUR), DEMO);

    expect(next?.get('demo')?.keys[0]).toEqual({ stored: DEMO_KEY, expires: '2026-06-04T17:00:00Z' });
  });

  it('says when the expiry set is already past', () => {
    const { result } = apply(expireChange('demo', keyIdOf(DEMO_KEY), NOW), DEMO);

    expect(formatResult(result, NOW)).toBe(
      `app demo: key ${keyIdOf(DEMO_KEY)} has expired (at 2026-06-01T12:00:00Z); list still shows it, prune ` +
        'removes it\n',
    );
    expect(JSON.parse(formatResultJson(result, NOW))).toMatchObject({ expired: true });
  });

  it('clears an expiry', () => {
    const document = documentOf({ demo: { keys: [{ stored: DEMO_KEY, expires: '2026-06-02T00:00:00Z' }] } });

    const { next, result } = apply(expireChange('demo', keyIdOf(DEMO_KEY), undefined), document);

    expect(serializeKeyDocument(next ?? document)).toBe(JSON.stringify({ demo: [DEMO_KEY] }));
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual({
      appId: 'demo',
      keyId: keyIdOf(DEMO_KEY),
      expires: null,
      expired: false,
    });
  });

  it('refuses a key the app does not have', () => {
    expect(() => apply(expireChange('demo', keyIdOf(PARTNER_KEY), NOW), DEMO)).toThrow(
      `app demo has no key ${keyIdOf(PARTNER_KEY)}`,
    );
  });
});

describe('prune', () => {
  const document = documentOf({
    demo: {
      keys: [
        { stored: DEMO_KEY, expires: '2026-06-01T11:00:00Z' },
        { stored: DEMO_NEXT_KEY, expires: '2026-06-01T12:00:00Z' },
        { stored: NEW_KEY },
      ],
    },
    gone: { keys: [{ stored: PARTNER_KEY, expires: '2026-01-01T00:00:00+01:00' }] },
    live: { keys: [{ stored: PARTNER_KEY, expires: '2026-06-01T12:00:01Z' }] },
  });

  it('removes the keys expired at now, by app, and an app left without keys, saying so by key id', () => {
    const { next, result } = apply(pruneChange(NOW), document);

    expect([...(next ?? document).keys()]).toEqual(['demo', 'live']);
    expect(next?.get('demo')?.keys).toEqual([{ stored: NEW_KEY }]);
    expect(formatResult(result, NOW)).toBe(
      `app demo: removed expired keys ${keyIdOf(DEMO_KEY)} ${keyIdOf(DEMO_NEXT_KEY)}\n` +
        `app gone: removed expired key ${keyIdOf(PARTNER_KEY)}; that was every key it had, so the app is removed\n`,
    );
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual({
      removed: [
        { appId: 'demo', keyId: keyIdOf(DEMO_KEY) },
        { appId: 'demo', keyId: keyIdOf(DEMO_NEXT_KEY) },
        { appId: 'gone', keyId: keyIdOf(PARTNER_KEY) },
      ],
      removedApps: ['gone'],
    });
  });

  it('writes nothing and says so when nothing has expired', () => {
    const all = apply(pruneChange(NOW), DEMO);
    const one = apply(pruneChange(NOW, 'live'), document);

    expect([all.next, one.next]).toEqual([undefined, undefined]);
    expect(formatResult(all.result, NOW)).toBe('no expired keys\n');
    expect(formatResult(one.result, NOW)).toBe('app live has no expired keys\n');
  });

  it('refuses an unknown app', () => {
    expect(() => apply(pruneChange(NOW, 'ghost'), document)).toThrow('unknown app: ghost');
  });
});

describe('allow and disallow', () => {
  const fenced = documentOf({
    demo: { keys: [{ stored: DEMO_KEY }], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
  });

  it.each<[string, KeyDocument, NetworkChange, DocumentApp, object]>([
    [
      'allow adds blocks to the allowlist and shows the whole list',
      DEMO,
      { kind: 'allow', cidrs: ['203.0.113.0/24', '198.51.100.7'] },
      { ...DEMO_APP, allowedCidrs: ['203.0.113.0/24', '198.51.100.7'] },
      { appId: 'demo', allowedCidrs: ['203.0.113.0/24', '198.51.100.7'] },
    ],
    [
      'allow --any removes the allowlist',
      fenced,
      { kind: 'allow-any' },
      { keys: [{ stored: DEMO_KEY }] },
      { appId: 'demo', allowedCidrs: null },
    ],
    [
      'disallow removes blocks, whatever their spelling',
      fenced,
      { kind: 'disallow', cidrs: ['2001:DB8:0::/32'] },
      { keys: [{ stored: DEMO_KEY }], allowedCidrs: ['203.0.113.0/24'] },
      { appId: 'demo', allowedCidrs: ['203.0.113.0/24'] },
    ],
    [
      'disallow of the last blocks leaves an empty allowlist',
      fenced,
      { kind: 'disallow', cidrs: ['203.0.113.0/24', '2001:db8::/32'] },
      { keys: [{ stored: DEMO_KEY }], allowedCidrs: [] },
      { appId: 'demo', allowedCidrs: [] },
    ],
  ])('%s', (_label, document, change, app, json) => {
    const { next, result } = apply(networkChange('demo', change), document);

    expect(next?.get('demo')).toEqual(app);
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual(json);
  });

  it.each([
    [
      'a block not in the allowlist',
      fenced,
      ['10.0.0.0/8'],
      'CIDR block #1 is not in the allowlist of app demo',
    ],
    [
      'an app without an allowlist',
      DEMO,
      ['10.0.0.0/8'],
      'app demo has no allowlist: it may call from any network',
    ],
  ])('disallow refuses %s on the first attempt', (_label, document, cidrs, message) => {
    expect(() => apply(networkChange('demo', { kind: 'disallow', cidrs }), document)).toThrow(message);
  });
});

describe('limit', () => {
  it('gives the app a limit of its own, writing only what was given', () => {
    const { next, result } = apply(limitChange('demo', { perSecond: 20 }), DEMO);

    expect(next?.get('demo')).toEqual({
      keys: [{ stored: DEMO_KEY }, { stored: DEMO_NEXT_KEY }],
      rateLimit: { perSecond: 20 },
    });
    expect(serializeKeyDocument(next ?? DEMO)).toBe(
      JSON.stringify({ demo: { keys: [DEMO_KEY, DEMO_NEXT_KEY], rateLimit: { perSecond: 20 } } }),
    );
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual({
      appId: 'demo',
      rateLimit: { perSecond: 20, burst: 20, source: 'app' },
    });
  });

  it('replaces an earlier limit and keeps the allowlist and the expiries', () => {
    const document = documentOf({
      demo: {
        keys: [{ stored: DEMO_KEY, expires: '2026-07-01T00:00:00Z' }],
        allowedCidrs: ['203.0.113.0/24'],
        rateLimit: { perSecond: 5, burst: 10 },
      },
    });

    const { next, result } = apply(limitChange('demo', { perSecond: 0.5, burst: 3 }), document);

    expect(next?.get('demo')).toEqual({
      keys: [{ stored: DEMO_KEY, expires: '2026-07-01T00:00:00Z' }],
      allowedCidrs: ['203.0.113.0/24'],
      rateLimit: { perSecond: 0.5, burst: 3 },
    });
    expect(formatResult(result, NOW)).toMatch(/^app demo: its own rate limit is now 0\.5\/s, burst 3 /);
  });

  it("--default removes the app's own limit, and the app goes back to a plain list of keys", () => {
    const document = documentOf({
      demo: { keys: [{ stored: DEMO_KEY }], rateLimit: { perSecond: 5, burst: 10 } },
    });

    const { next, result } = apply(limitChange('demo', 'default'), document);

    expect(next?.get('demo')).toEqual({ keys: [{ stored: DEMO_KEY }] });
    expect(serializeKeyDocument(next ?? document)).toBe(JSON.stringify({ demo: [DEMO_KEY] }));
    expect(JSON.parse(formatResultJson(result, NOW))).toEqual({
      appId: 'demo',
      rateLimit: { source: 'default' },
    });
  });

  it('--default on an app without a limit of its own leaves the document as it was', () => {
    const { next } = apply(limitChange('demo', 'default'), DEMO);

    expect(serializeKeyDocument(next ?? DEMO)).toBe(serializeKeyDocument(DEMO));
  });

  it('applies the same limit to the newer document a retry reads', () => {
    const newer = documentOf({ ...Object.fromEntries(DEMO), partner: { keys: [{ stored: PARTNER_KEY }] } });

    const { next } = apply(limitChange('demo', { perSecond: 20, burst: 40 }), newer, true);

    expect(next?.get('demo')?.rateLimit).toEqual({ perSecond: 20, burst: 40 });
    expect(next?.get('partner')).toEqual({ keys: [{ stored: PARTNER_KEY }] });
  });

  it.each<[string, Parameters<typeof limitChange>[1]]>([
    ['a limit', { perSecond: 20 }],
    ['--default', 'default'],
  ])('refuses an unknown app for %s', (_label, change) => {
    expect(() => apply(limitChange('ghost', change), DEMO)).toThrow('unknown app: ghost');
  });
});

describe('list', () => {
  /** Every form: no expiry, expiries ahead and past (one written with an offset), a digest, allowlists. */
  const SAMPLE = documentOf({
    'acme-shop': {
      keys: [
        { stored: DEMO_KEY, expires: '2026-06-01T17:30:00Z' },
        { stored: DEMO_NEXT_KEY, expires: '2026-06-04T12:00:00Z' },
        { stored: NEW_KEY },
      ],
    },
    'beta-pay': {
      keys: [{ stored: DIGEST, expires: '2026-06-01T12:10:00+02:00' }, { stored: PARTNER_KEY }],
      allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
    },
    closed: { keys: [{ stored: PARTNER_KEY }], allowedCidrs: [] },
  });

  it('shows each app with its networks, then each key with its expiry and state, in UTC', () => {
    expect(formatList(listApps(SAMPLE), NOW)).toBe(
      [
        "acme-shop: any network; rate limit: the stack's appRateLimit, if set",
        `  ${keyIdOf(DEMO_KEY)}  2026-06-01T17:30:00Z  expires in 5h`,
        `  ${keyIdOf(DEMO_NEXT_KEY)}  2026-06-04T12:00:00Z  expires in 3d`,
        `  ${keyIdOf(NEW_KEY)}  never`,
        "beta-pay: only 203.0.113.0/24 2001:db8::/32; rate limit: the stack's appRateLimit, if set",
        `  ${keyIdOf(DIGEST)}  2026-06-01T10:10:00Z  expired  (stored as its sha256 digest)`,
        `  ${keyIdOf(PARTNER_KEY)}  never`,
        'closed: no network (its allowlist is empty: every request is refused); ' +
          "rate limit: the stack's appRateLimit, if set",
        `  ${keyIdOf(PARTNER_KEY)}  never`,
        '',
      ].join('\n'),
    );
  });

  it('--json gives every key with expires (UTC or null), expired and digest, allowedCidrs or null, and the rate limit', () => {
    expect(JSON.parse(formatListJson(listApps(SAMPLE), NOW))).toEqual([
      {
        appId: 'acme-shop',
        keyIds: [DEMO_KEY, DEMO_NEXT_KEY, NEW_KEY].map(keyIdOf),
        keys: [
          { keyId: keyIdOf(DEMO_KEY), expires: '2026-06-01T17:30:00Z', expired: false, digest: false },
          { keyId: keyIdOf(DEMO_NEXT_KEY), expires: '2026-06-04T12:00:00Z', expired: false, digest: false },
          { keyId: keyIdOf(NEW_KEY), expires: null, expired: false, digest: false },
        ],
        allowedCidrs: null,
        rateLimit: { source: 'default' },
      },
      {
        appId: 'beta-pay',
        keyIds: [DIGEST, PARTNER_KEY].map(keyIdOf),
        keys: [
          { keyId: keyIdOf(DIGEST), expires: '2026-06-01T10:10:00Z', expired: true, digest: true },
          { keyId: keyIdOf(PARTNER_KEY), expires: null, expired: false, digest: false },
        ],
        allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
        rateLimit: { source: 'default' },
      },
      {
        appId: 'closed',
        keyIds: [keyIdOf(PARTNER_KEY)],
        keys: [{ keyId: keyIdOf(PARTNER_KEY), expires: null, expired: false, digest: false }],
        allowedCidrs: [],
        rateLimit: { source: 'default' },
      },
    ]);
  });

  describe('with rate limits', () => {
    const LIMITED = documentOf({
      'acme-shop': { keys: [{ stored: DEMO_KEY }], rateLimit: { perSecond: 20, burst: 40 } },
      'beta-pay': {
        keys: [{ stored: PARTNER_KEY }],
        allowedCidrs: ['203.0.113.0/24'],
        rateLimit: { perSecond: 2.5 },
      },
      'slow-pay': { keys: [{ stored: DIGEST }], rateLimit: { perSecond: 0.5 } },
      plain: { keys: [{ stored: NEW_KEY }] },
    });

    it("shows an app's own limit, its burst filled in as the Lambda fills it, and that the stack's applies to the rest", () => {
      expect(formatList(listApps(LIMITED), NOW)).toBe(
        [
          "acme-shop: any network; rate limit: 20/s, burst 40 (this app's own)",
          `  ${keyIdOf(DEMO_KEY)}  never`,
          "beta-pay: only 203.0.113.0/24; rate limit: 2.5/s, burst 3 (this app's own)",
          `  ${keyIdOf(PARTNER_KEY)}  never`,
          "plain: any network; rate limit: the stack's appRateLimit, if set",
          `  ${keyIdOf(NEW_KEY)}  never`,
          "slow-pay: any network; rate limit: 0.5/s, burst 1 (this app's own)",
          `  ${keyIdOf(DIGEST)}  never  (stored as its sha256 digest)`,
          '',
        ].join('\n'),
      );
    });

    it("shows the stack's default by number when the operator gives it, and an app's own limit over it", () => {
      const shown = formatList(listApps(LIMITED), NOW, { perSecond: 50, burst: 100 });

      expect(shown).toContain("plain: any network; rate limit: 50/s, burst 100 (the stack's default)\n");
      expect(shown).toContain("acme-shop: any network; rate limit: 20/s, burst 40 (this app's own)\n");
    });

    it('--json gives rateLimit as {perSecond, burst, source}, or {source: "default"} when the default is not known', () => {
      const rateLimits = (defaultLimit?: { perSecond: number; burst: number }) =>
        (JSON.parse(formatListJson(listApps(LIMITED), NOW, defaultLimit)) as { rateLimit: unknown }[]).map(
          (app) => app.rateLimit,
        );

      expect(rateLimits()).toEqual([
        { perSecond: 20, burst: 40, source: 'app' },
        { perSecond: 2.5, burst: 3, source: 'app' },
        { source: 'default' },
        { perSecond: 0.5, burst: 1, source: 'app' },
      ]);
      expect(rateLimits({ perSecond: 50, burst: 100 })).toEqual([
        { perSecond: 20, burst: 40, source: 'app' },
        { perSecond: 2.5, burst: 3, source: 'app' },
        { perSecond: 50, burst: 100, source: 'default' },
        { perSecond: 0.5, burst: 1, source: 'app' },
      ]);
    });
  });

  it('never shows a key, plain or digest', () => {
    const shown = formatList(listApps(SAMPLE), NOW) + formatListJson(listApps(SAMPLE), NOW);

    for (const key of [DEMO_KEY, DEMO_NEXT_KEY, NEW_KEY, PARTNER_KEY, DIGEST])
      expect(shown).not.toContain(key);
  });
});
