import { BuiltEntries } from '../../../../shared/keys/built-entries';
import type { KeyringApp } from '../../../../shared/keys/keyring';
import { parseKeyringLazily } from '../../../../shared/keys/lazy-keyring';
import type { KeyringProblem } from '../../../../shared/keys/keyring';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

const appNumbered = (index: number): KeyringApp => ({
  keys: [{ id: `id-${index}`, digest: Buffer.alloc(16) }],
});

describe('BuiltEntries', () => {
  it('keeps at most two generations of entries, whatever the number of distinct apps asked for', () => {
    const entries = new BuiltEntries(1_000);
    const keyrings = [{}, {}, {}];
    const keptAlong: number[] = [];

    for (let index = 0; index < 100_000; index++) {
      entries.set(keyrings[index % 3] ?? {}, `merchant-${index}`, appNumbered(index));
      keptAlong.push(entries.kept);
    }

    expect(Math.max(...keptAlong)).toBe(2_000);
    // The oldest are gone; the newest are kept.
    expect(entries.get(keyrings[0] ?? {}, 'merchant-0')).toBeUndefined();
    expect(entries.get(keyrings[99_999 % 3] ?? {}, 'merchant-99999')).toEqual(appNumbered(99_999));
  });

  it('never drops an entry asked for at least once a generation (a hot app is built once)', () => {
    const entries = new BuiltEntries(100);
    const keyring = {};
    const hot = appNumbered(-1);
    entries.set(keyring, 'hot', hot);

    const seen: (KeyringApp | null | undefined)[] = [];
    for (let index = 0; index < 10_000; index++) {
      entries.set(keyring, `cold-${index}`, appNumbered(index));
      if (index % 50 === 0) seen.push(entries.get(keyring, 'hot'));
    }

    expect(seen.every((entry) => entry === hot)).toBe(true);
  });

  it("keeps each keyring's entries apart, and an entry that cannot be served as null", () => {
    const entries = new BuiltEntries();
    const first = {};
    const second = {};
    entries.set(first, 'demo', appNumbered(1));
    entries.set(second, 'demo', null);

    expect(entries.get(first, 'demo')).toEqual(appNumbered(1));
    expect(entries.get(second, 'demo')).toBeNull();
    expect(entries.get(second, 'partner')).toBeUndefined();
    expect(entries.kept).toBe(2);
  });

  it('refuses a generation size that is not a positive integer', () => {
    expect(() => new BuiltEntries(0)).toThrow('generationSize must be a positive integer, got 0');
  });
});

describe('a lazily built keyring over a bounded BuiltEntries', () => {
  it('builds an evicted entry again, the same app, and reports a malformed entry once per loaded copy', () => {
    // Arrange: two slots a generation, four apps, one with a malformed second key.
    const builtEntries = new BuiltEntries(2);
    const later: KeyringProblem[] = [];
    const text = JSON.stringify({
      demo: DEMO_KEY,
      partner: [PARTNER_KEY, 'short'],
      third: DEMO_KEY,
      fourth: DEMO_KEY,
      fifth: DEMO_KEY,
    });
    const { keyring } = parseKeyringLazily(text, {
      onProblems: (problems) => later.push(...problems),
      builtEntries,
    });

    // Act
    const firstPartner = keyring.get('partner');
    for (const appId of ['third', 'fourth', 'fifth', 'demo']) keyring.get(appId);
    const secondPartner = keyring.get('partner');

    // Assert: rebuilt (a new object, the same content), reported once, never more than 4 kept.
    expect(secondPartner).not.toBe(firstPartner);
    expect(secondPartner).toEqual(firstPartner);
    expect(later.map((problem) => problem.entryPosition)).toEqual([2]);
    expect(builtEntries.kept).toBeLessThanOrEqual(4);
  });
});
