import {
  isExpired,
  keyIdOf,
  KeyDocumentError,
  parseKeyDocument,
  serializeKeyDocument,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
import {
  MAX_KEYS_KEPT_BY_ROTATION,
  MIN_KEYS_KEPT_BY_ROTATION,
  rotateAllApps,
  supersededKeyLifetimeMs,
  type RotationPolicy,
} from '../../../../shared/keys/rotation';
import { toDigestForm } from '../../../../shared/keys/key-material';

const KEY_A = 'test-rotation-key-a-0123456789';
const KEY_B = 'test-rotation-key-b-0123456789';
const KEY_C = 'test-rotation-key-c-0123456789';
const HASHED = toDigestForm('test-rotation-hashed-0123456789');
const FRESH_1 = 'test-rotation-fresh-1-0123456789';
const FRESH_2 = 'test-rotation-fresh-2-0123456789';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
const MONTHLY: RotationPolicy = { keep: 2, periodMs: 30 * DAY_MS };
/** The rotation's clock, midday: its window (a period in days) opened at midnight. */
const NOW = Date.parse('2026-03-01T12:00:00.250Z');
/** One period after the start of NOW's rotation window. */
const IN_ONE_PERIOD = '2026-03-31T00:00:00Z';

/** Fresh keys in a known order: fresh-1, fresh-2, ... */
function freshKeys(): () => string {
  let count = 0;
  return () => `test-rotation-fresh-${++count}-0123456789`;
}

function document(entries: Record<string, unknown>): KeyDocument {
  return parseKeyDocument(JSON.stringify(entries));
}

/** The stored keys of one app, oldest first. */
function stored(doc: KeyDocument, appId: string): string[] | undefined {
  return doc.get(appId)?.keys.map((key) => key.stored);
}

describe('rotateAllApps', () => {
  it('appends one fresh key without expiry and sets the previous key to expire one period after the rotation window opened (keep 2), leaving the document it was given unchanged', () => {
    const original = document({ demo: [KEY_A] });

    const rotated = rotateAllApps(original, MONTHLY, NOW, freshKeys());

    expect(serializeKeyDocument(original)).toBe(JSON.stringify({ demo: [KEY_A] }));
    expect(rotated.document.get('demo')).toEqual({
      keys: [{ stored: KEY_A, expires: IN_ONE_PERIOD }, { stored: FRESH_1 }],
    });
    expect(rotated.rotatedAppIds).toEqual(['demo']);
    expect(rotated.supersededKeysExpireBy).toBe(Date.parse(IN_ONE_PERIOD));
  });

  it.each<[string, unknown[], Partial<RotationPolicy> & { now?: number }, object[]]>([
    [
      'gives superseded keys keep - 1 periods: two with keep 3',
      [KEY_A, KEY_B],
      { keep: 3 },
      [
        { stored: KEY_A, expires: '2026-04-30T00:00:00Z' },
        { stored: KEY_B, expires: '2026-04-30T00:00:00Z' },
        { stored: FRESH_1 },
      ],
    ],
    [
      'keeps an earlier expiry as written (its offset too) and lowers a later one',
      [
        { key: KEY_A, expires: '2026-03-10T09:00:00+02:00' },
        { key: KEY_B, expires: '2027-01-01T00:00:00Z' },
        KEY_C,
      ],
      {},
      [
        { stored: KEY_A, expires: '2026-03-10T09:00:00+02:00' },
        { stored: KEY_B, expires: IN_ONE_PERIOD },
        { stored: KEY_C, expires: IN_ONE_PERIOD },
        { stored: FRESH_1 },
      ],
    ],
    [
      'never extends an app that has an end date: when every key expires, the fresh key ends with the last of them',
      [
        { key: KEY_A, expires: '2026-03-20T00:00:00Z' },
        { key: KEY_B, expires: '2026-06-01T00:00:00+02:00' },
      ],
      {},
      [
        { stored: KEY_A, expires: '2026-03-20T00:00:00Z' },
        { stored: KEY_B, expires: IN_ONE_PERIOD },
        { stored: FRESH_1, expires: '2026-06-01T00:00:00+02:00' },
      ],
    ],
    [
      'gives the fresh key no expiry as soon as one key of the app has none',
      [{ key: KEY_A, expires: '2026-03-20T00:00:00Z' }, KEY_B],
      {},
      [
        { stored: KEY_A, expires: '2026-03-20T00:00:00Z' },
        { stored: KEY_B, expires: IN_ONE_PERIOD },
        { stored: FRESH_1 },
      ],
    ],
    [
      'counts from the start of the hour when the period is in hours',
      [KEY_A],
      { periodMs: 12 * HOUR_MS, now: Date.parse('2026-03-01T13:45:10Z') },
      [{ stored: KEY_A, expires: '2026-03-02T01:00:00Z' }, { stored: FRESH_1 }],
    ],
  ])('%s', (_label, keys, { now = NOW, ...policy }, rotated) => {
    const { document: after } = rotateAllApps(
      document({ demo: keys }),
      { ...MONTHLY, ...policy },
      now,
      freshKeys(),
    );

    expect(after.get('demo')?.keys).toEqual(rotated);
  });

  it('removes the keys that have expired by the rotation, a key expiring at that very instant included', () => {
    const expiredYesterday = { key: KEY_A, expires: '2026-02-28T12:00:00Z' };
    const expiringNow = { key: KEY_B, expires: new Date(NOW).toISOString() };

    const rotated = rotateAllApps(
      document({ demo: [expiredYesterday, expiringNow, KEY_C], partner: [KEY_A] }),
      MONTHLY,
      NOW,
      freshKeys(),
    );

    expect(rotated.document.get('demo')?.keys).toEqual([
      { stored: KEY_C, expires: IN_ONE_PERIOD },
      { stored: FRESH_1 },
    ]);
    expect(rotated.prunedKeys).toEqual([
      { appId: 'demo', keyId: keyIdOf(KEY_A) },
      { appId: 'demo', keyId: keyIdOf(KEY_B) },
    ]);
  });

  it("keeps what it does not own: the app's allowlist, an empty one (no network) included", () => {
    const rotated = rotateAllApps(
      document({
        shop: {
          keys: [KEY_A],
          allowedCidrs: ['203.0.113.0/24', '2001:DB8::/32'],
          rateLimit: { perSecond: 20 },
        },
        closed: { keys: [KEY_B], allowedCidrs: [] },
      }),
      MONTHLY,
      NOW,
      freshKeys(),
    );

    expect(rotated.document.get('shop')?.allowedCidrs).toEqual(['203.0.113.0/24', '2001:DB8::/32']);
    expect(rotated.document.get('closed')?.allowedCidrs).toEqual([]);
    expect(rotated.document.get('shop')?.rateLimit).toEqual({ perSecond: 20 });
    expect(rotated.rotatedAppIds).toEqual(['closed', 'shop']);
  });

  it('leaves an app whose every key has expired as it was: rotation never gives access back', () => {
    const lapsed = [{ key: KEY_A, expires: '2026-01-01T00:00:00Z' }];

    const rotated = rotateAllApps(document({ lapsed, demo: [KEY_B] }), MONTHLY, NOW, freshKeys());

    expect(rotated.document.get('lapsed')).toEqual({
      keys: [{ stored: KEY_A, expires: '2026-01-01T00:00:00Z' }],
    });
    expect(rotated.expiredAppIds).toEqual(['lapsed']);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
    expect(rotated.prunedKeys).toEqual([]);
  });

  it('gives every app its own fresh key', () => {
    const rotated = rotateAllApps(document({ partner: [KEY_B], demo: [KEY_A] }), MONTHLY, NOW, freshKeys());

    expect(stored(rotated.document, 'demo')).toEqual([KEY_A, FRESH_1]);
    expect(stored(rotated.document, 'partner')).toEqual([KEY_B, FRESH_2]);
    expect(rotated.rotatedAppIds).toEqual(['demo', 'partner']);
  });

  it.each([
    ['only a digest', [HASHED]],
    ['a digest beside a plain key', [KEY_A, HASHED]],
    ['a digest beside an expired key', [{ key: KEY_A, expires: '2026-01-01T00:00:00Z' }, HASHED]],
  ])('leaves an app holding %s exactly as it was', (_label, keys) => {
    const original = document({ hashed: keys, demo: [KEY_B] });

    const rotated = rotateAllApps(original, MONTHLY, NOW, freshKeys());

    expect(rotated.document.get('hashed')).toEqual(original.get('hashed'));
    expect(rotated.skippedAppIds).toEqual(['hashed']);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
  });

  it('holds keep valid keys and no expired one after each rotation on schedule, wherever in its window it runs', () => {
    const policy: RotationPolicy = { keep: 3, periodMs: 7 * DAY_MS };
    const firstDay = Date.parse('2026-03-01T00:00:00Z');
    // Secrets Manager runs each rotation at any hour of its day.
    const hoursIntoWindow = [13, 2, 23, 0, 9];
    let doc = document({ demo: [KEY_A] });
    const newKey = freshKeys();
    const afterEach: { keys: number; expired: number }[] = [];

    hoursIntoWindow.forEach((hours, rotation) => {
      const now = firstDay + rotation * policy.periodMs + hours * HOUR_MS;
      doc = rotateAllApps(doc, policy, now, newKey).document;
      const keys = doc.get('demo')?.keys ?? [];
      afterEach.push({ keys: keys.length, expired: keys.filter((key) => isExpired(key, now)).length });
    });

    expect(afterEach).toEqual([
      { keys: 2, expired: 0 },
      { keys: 3, expired: 0 },
      { keys: 3, expired: 0 },
      { keys: 3, expired: 0 },
      { keys: 3, expired: 0 },
    ]);
    expect(doc.get('demo')?.keys[0]?.expires).toBe('2026-04-05T00:00:00Z');
  });

  it('rotates an empty document into an empty document', () => {
    const rotated = rotateAllApps(new Map(), MONTHLY, NOW, freshKeys());

    expect(rotated.document.size).toBe(0);
    expect(rotated.rotatedAppIds).toEqual([]);
  });

  it.each([1, 0, -2, 2.5, Number.NaN, MAX_KEYS_KEPT_BY_ROTATION + 1])('refuses keep = %p', (keep) => {
    expect(() => rotateAllApps(document({ demo: [KEY_A] }), { ...MONTHLY, keep }, NOW, freshKeys())).toThrow(
      new KeyDocumentError(
        `keep must be a whole number from ${MIN_KEYS_KEPT_BY_ROTATION} to ${MAX_KEYS_KEPT_BY_ROTATION}`,
      ),
    );
  });

  it.each([0, -3_600_000, 5_400_000, 1.5, Number.POSITIVE_INFINITY])(
    'refuses a period of %p ms',
    (periodMs) => {
      expect(() =>
        rotateAllApps(document({ demo: [KEY_A] }), { keep: 2, periodMs }, NOW, freshKeys()),
      ).toThrow(new KeyDocumentError('the rotation period must be a whole, positive number of hours'));
    },
  );

  it.each([
    ['the app already has', KEY_A],
    ['that is not a valid key', 'short'],
  ])('refuses a fresh key %s', (_label, fresh) => {
    expect(() => rotateAllApps(document({ demo: [KEY_A] }), MONTHLY, NOW, () => fresh)).toThrow(
      KeyDocumentError,
    );
  });
});

describe('supersededKeyLifetimeMs', () => {
  it('is keep - 1 periods', () => {
    expect(supersededKeyLifetimeMs({ keep: 4, periodMs: 12 * 3_600_000 })).toBe(36 * 3_600_000);
  });

  it('fits a four-digit year at the longest period and the most keys', () => {
    const longest = supersededKeyLifetimeMs({ keep: MAX_KEYS_KEPT_BY_ROTATION, periodMs: 1000 * DAY_MS });

    expect(new Date(Date.parse('2100-01-01T00:00:00Z') + longest).getUTCFullYear()).toBeLessThan(10_000);
  });
});
