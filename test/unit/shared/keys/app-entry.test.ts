import { readAppEntry } from '../../../../shared/keys/app-entry';
import { generateKey, sha256, toDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY } from '../../../support/keys';

const EXPIRES = '2026-12-24T00:00:00Z';
const read = (value: unknown) => readAppEntry({ position: 3, name: 'shop', value });

describe('readAppEntry: the forms of an app entry', () => {
  it('reads a key entry that is a bare key', () => {
    expect(read(DEMO_KEY)).toEqual({
      appId: 'shop',
      usable: true,
      keys: [{ stored: DEMO_KEY, digest: sha256(DEMO_KEY) }],
      problems: [],
    });
  });

  it('reads a key object with its expiry, as written and as an instant', () => {
    const reading = read([{ key: DEMO_KEY, expires: '2026-12-24T01:00:00+01:00' }]);

    expect(reading.keys).toEqual([
      {
        stored: DEMO_KEY,
        digest: sha256(DEMO_KEY),
        expires: { text: '2026-12-24T01:00:00+01:00', at: Date.UTC(2026, 11, 24) },
      },
    ]);
  });

  it('reads a key object without an expiry as a key that does not expire', () => {
    expect(read([{ key: DEMO_KEY }]).keys).toEqual([{ stored: DEMO_KEY, digest: sha256(DEMO_KEY) }]);
  });

  it('reads a list mixing bare keys, digests and key objects, in order', () => {
    const digest = toDigestForm(DEMO_NEXT_KEY);

    const reading = read([DEMO_KEY, { key: digest, expires: EXPIRES }]);

    expect(reading.keys.map((key) => key.stored)).toEqual([DEMO_KEY, digest]);
    expect(reading.keys[1]?.digest).toEqual(sha256(DEMO_NEXT_KEY));
  });

  it('reads an app object with its allowlist, as written and as parsed', () => {
    const reading = read({ keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] });

    expect(reading.usable).toBe(true);
    expect(reading.allowlist?.texts).toEqual(['203.0.113.0/24', '2001:db8::/32']);
    expect(reading.allowlist?.cidrs.map((cidr) => cidr.family)).toEqual(['ipv4', 'ipv6']);
  });

  it('tells an empty allowlist (no network) from none (any network)', () => {
    expect(read({ keys: [DEMO_KEY], allowedCidrs: [] }).allowlist).toEqual({ texts: [], cidrs: [] });
    expect(read({ keys: [DEMO_KEY] })).not.toHaveProperty('allowlist');
  });
});

describe('readAppEntry: strict, so that a typo never widens access', () => {
  it.each([
    [
      'an unknown field in a key object',
      [DEMO_NEXT_KEY, { key: DEMO_KEY, expiry: EXPIRES }],
      'key object field #2 is not one of "key", "expires"',
    ],
    [
      'a key object without its key',
      [DEMO_NEXT_KEY, { expires: EXPIRES }],
      'key object needs "key", the key as a string',
    ],
    [
      'an expiry that is a date only',
      [DEMO_NEXT_KEY, { key: DEMO_KEY, expires: '2026-12-24' }],
      '"expires" must be an RFC 3339 date-time with Z or an offset, such as 2026-12-24T00:00:00Z',
    ],
    [
      'an expiry that is a number',
      [DEMO_NEXT_KEY, { key: DEMO_KEY, expires: 1798070400 }],
      '"expires" must be an RFC 3339 date-time with Z or an offset, such as 2026-12-24T00:00:00Z',
    ],
    ['a key that is a number', [DEMO_NEXT_KEY, 42], 'key is not a string or a key object'],
    [
      'a key object holding a short key',
      [DEMO_NEXT_KEY, { key: 'short' }],
      'key length must be 16 to 512 characters',
    ],
  ])('leaves out the one key with %s, by position, and serves the rest', (_label, value, reason) => {
    const reading = read(value);

    expect(reading.usable).toBe(true);
    expect(reading.keys.map((key) => key.stored)).toEqual([DEMO_NEXT_KEY]);
    expect(reading.problems).toEqual([{ entryPosition: 3, appId: 'shop', keyPosition: 2, reason }]);
  });

  it.each([
    [
      'an unknown field in the app object',
      { keys: [DEMO_KEY], allowedCIDRs: ['203.0.113.0/24'] },
      'app object field #2 is not one of "keys", "allowedCidrs", "rateLimit"',
    ],
    [
      'an allowlist that is not a list',
      { keys: [DEMO_KEY], allowedCidrs: '203.0.113.0/24' },
      '"allowedCidrs" must be a list of CIDR blocks',
    ],
    [
      'an invalid CIDR block',
      { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/24', '203.0.113.7/24'] },
      '"allowedCidrs" #2: host bits are set: give the network address of the block',
    ],
    [
      'a CIDR block that is not a string',
      { keys: [DEMO_KEY], allowedCidrs: [24] },
      '"allowedCidrs" #1: not a string',
    ],
    [
      'an app object without keys',
      { allowedCidrs: ['203.0.113.0/24'] },
      'app object needs "keys", a list of keys',
    ],
    [
      'an app object whose keys are one key, not a list',
      { keys: DEMO_KEY },
      'app object needs "keys", a list of keys',
    ],
    ['an empty key list', [], 'app has an empty key list'],
    ['an app object with an empty key list', { keys: [] }, 'app has an empty key list'],
  ])('leaves the whole app out for %s: it fails closed', (_label, value, reason) => {
    const reading = read(value);

    expect(reading.usable).toBe(false);
    expect(reading.keys).toEqual([]);
    expect(reading.problems).toEqual([{ entryPosition: 3, appId: 'shop', reason }]);
  });

  it('leaves out an app whose every key is malformed, reporting each', () => {
    const reading = read([{ key: DEMO_KEY, expires: 'soon' }, 'short']);

    expect(reading.usable).toBe(false);
    expect(reading.problems.map((problem) => problem.keyPosition)).toEqual([1, 2]);
  });

  it('never repeats an unknown field name or a value in a reason: they may be a pasted key', () => {
    const reading = read({ keys: [DEMO_KEY], [DEMO_NEXT_KEY]: true });

    expect(JSON.stringify(reading.problems)).not.toContain(DEMO_NEXT_KEY);
    expect(JSON.stringify(reading.problems)).not.toContain(DEMO_KEY);
  });
});

describe('readAppEntry: an app id that cannot be one', () => {
  const PASTED = 'app id starts with payk_, like a generated key (a pasted key?)';

  it.each([
    ['a character outside the alphabet', 'bad app!', 'app id is outside the allowed alphabet or length'],
    ['a generated key', 'payk_' + 'Q'.repeat(43), PASTED],
    ['a key of the key format', generateKey(), 'app id has the shape of a generated key (a pasted key?)'],
  ])('leaves the app out for %s, by position only, never by its text', (_label, name, reason) => {
    const reading = readAppEntry({ position: 3, name, value: DEMO_KEY });

    expect(reading.usable).toBe(false);
    expect(reading.problems).toEqual([{ entryPosition: 3, reason }]);
  });
});
