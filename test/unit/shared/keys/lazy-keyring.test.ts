import fc from 'fast-check';
import { authenticate } from '../../../../shared/keys/authenticate';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { MalformedSecretError, parseKeyring, type KeyringProblem } from '../../../../shared/keys/keyring';
import { parseKeyringLazily } from '../../../../shared/keys/lazy-keyring';
import { appIdArb, plainKeyArb } from '../../../support/properties/arbitraries';
import {
  expectAtLeast,
  expectInstanceOf,
  expectToBe,
  expectToEqual,
  expectToThrow,
} from '../../../support/properties/cheap-expect';
import { storedKeyArb, textOf } from '../../../support/properties/secret-members';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';

/** Every form an entry takes, well-formed or not: keys, key lists, key objects, app objects with their rules. */
const entryValueArb: fc.Arbitrary<unknown> = fc.oneof(
  storedKeyArb,
  fc.array(storedKeyArb, { maxLength: 4 }),
  fc.record({
    key: plainKeyArb,
    expires: fc.constantFrom('2026-12-24T00:00:00Z', '2026-02-30T00:00:00Z', 'tomorrow'),
  }),
  fc.record(
    {
      keys: fc.array(fc.oneof(storedKeyArb, plainKeyArb.map(toDigestForm)), { maxLength: 4 }),
      allowedCidrs: fc.constantFrom(['203.0.113.0/24', '2001:db8::/32'], [], ['203.0.113.7/24']),
      rateLimit: fc.constantFrom({ perSecond: 20, burst: 40 }, { perSecond: -1 }),
      note: fc.constant('an unknown field'),
    },
    { requiredKeys: ['keys'] },
  ),
  fc.constantFrom<unknown>(null, 42, {}),
);

const secretArb = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 4, arbitrary: appIdArb },
        { weight: 1, arbitrary: fc.stringMatching(/^[0-9]{1,3}$/) },
        { weight: 1, arbitrary: fc.constantFrom('payk_' + 'A'.repeat(43), 'bad id', 'constructor') },
      ),
      entryValueArb,
    ),
    { maxLength: 8 },
  )
  .chain((members) =>
    // Mostly as the tools write it (compact); otherwise with whitespace between tokens, as a hand edit leaves it.
    fc
      .oneof(
        { weight: 3, arbitrary: fc.constant<string[]>([]) },
        { weight: 1, arbitrary: fc.array(fc.constantFrom('', ' ', '\n  '), { maxLength: 24 }) },
      )
      .map((spaces) => textOf(members, spaces)),
  );

/** Parses lazily, collecting what is reported after the load in `later`. */
function lazily(text: string) {
  const later: KeyringProblem[] = [];
  const parsed = parseKeyringLazily(text, { onProblems: (problems) => later.push(...problems) });
  return { ...parsed, later };
}

function namesIn(text: string): string[] {
  return Object.keys(JSON.parse(text) as object);
}

describe('a keyring built an app at a time', () => {
  it('serves exactly what the eager parse serves, reports the same problems by position, and refuses the same secrets', () => {
    const seen = { refused: 0, served: 0, withProblems: 0 };
    fc.assert(
      fc.property(secretArb, (text) => {
        let eager: ReturnType<typeof parseKeyring>;
        try {
          eager = parseKeyring(text);
        } catch (error) {
          expectInstanceOf(error, MalformedSecretError);
          const refusal = error as MalformedSecretError;
          const lazyError = expectToThrow(() => lazily(text), refusal.message);
          expectToEqual((lazyError as MalformedSecretError).problems, refusal.problems);
          seen.refused++;
          return;
        }
        const lazy = lazily(text);

        // Every name asked for (and names the secret lacks) gets the same answer.
        for (const name of [...namesIn(text), 'nobody', '__proto__', 'toString']) {
          expectToEqual(lazy.keyring.get(name), eager.keyring.get(name));
          expectToBe(lazy.keyring.has(name), eager.keyring.has(name));
        }
        // Once every entry was asked for, every problem was reported once, located as the eager parse does.
        const reported = [...lazy.problems, ...lazy.later].sort((a, b) => a.entryPosition - b.entryPosition);
        expectToEqual(reported, eager.problems);
        // A walk gives the apps in the order written, as the eager keyring does.
        expectToEqual([...lazy.keyring.keys()], [...eager.keyring.keys()]);
        expectToBe(lazy.keyring.size, eager.keyring.size);
        expectToBe(lazy.entries, namesIn(text).length);
        // Never fewer comparisons than the most keys an app holds, or a right key would go unchecked.
        const most = Math.max(1, ...[...eager.keyring.values()].map((app) => app.keys.length));
        expectAtLeast(lazy.keyring.comparisonsPerRequest, most);
        seen.served++;
        if (eager.problems.length > 0) seen.withProblems++;
      }),
      { numRuns: 1_000 },
    );

    // The generator reaches refused secrets, served ones, and served ones with malformed entries, all often.
    expect(Math.min(seen.refused, seen.served, seen.withProblems)).toBeGreaterThan(50);
  });

  it('builds nothing at load past the first usable entry: a later malformed entry is reported when its app is asked for, once', () => {
    // Arrange: demo is fine; partner's second key and the third entry's id are malformed.
    const text = JSON.stringify({
      demo: DEMO_KEY,
      partner: [PARTNER_KEY, 'short'],
      'not an id': DEMO_NEXT_KEY,
    });

    // Act
    const { keyring, problems, later } = lazily(text);
    const atLoad = [...later];
    keyring.get('nobody');
    const afterUnknown = [...later];
    keyring.get('partner');
    keyring.get('partner');
    const afterPartner = [...later];

    // Assert
    expect([problems, atLoad, afterUnknown]).toEqual([[], [], []]);
    expect(afterPartner).toEqual([
      {
        entryPosition: 2,
        appId: 'partner',
        keyPosition: 2,
        reason: 'key length must be 16 to 512 characters',
      },
    ]);
  });

  it('reports, at load, the malformed entries it met before the first usable one, by their position as written', () => {
    const text = '{"broken": ["short"], "7": 42, "demo": "' + DEMO_KEY + '"}';

    const { problems, later } = lazily(text);

    // "7" is listed first by JSON.parse, yet it is the second entry as written.
    expect(problems.map((problem) => [problem.entryPosition, problem.reason])).toEqual([
      [1, 'key length must be 16 to 512 characters'],
      [2, 'key is not a string or a key object'],
    ]);
    expect(later).toEqual([]);
  });

  it('refuses a secret that is not a JSON object, as the eager parse does', () => {
    // The property's secrets are all objects: it covers the refusal of one whose every entry is malformed.
    expect(() => lazily('not json')).toThrow(new MalformedSecretError('secret is not valid JSON'));
    expect(() => lazily('[]')).toThrow(
      new MalformedSecretError('secret must be a JSON object mapping App-id to keys'),
    );
  });

  describe('constant time', () => {
    const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');

    afterEach(() => {
      jest.restoreAllMocks();
    });

    it.each([
      ['the app of three keys', 'wide'],
      ['an app of one key', 'narrow'],
      ['an unknown app', 'nobody'],
      ['an app whose entry is malformed', 'broken'],
    ])('compares as many digests for %s as the longest key list of the shard', (_label, appId) => {
      // Arrange: one app of three keys, one of one, one that cannot be served.
      const { keyring } = lazily(
        JSON.stringify({ wide: [DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY], narrow: DEMO_KEY, broken: ['short'] }),
      );
      const compare = jest.spyOn(crypto, 'timingSafeEqual');

      // Act
      const decision = authenticate({ appId, appKey: 'wrong-key-0123456789' }, keyring, {
        now: Date.parse('2026-11-21T12:00:00Z'),
        sourceIp: '203.0.113.10',
      });

      // Assert
      expect(decision.ok).toBe(false);
      expect(compare).toHaveBeenCalledTimes(3);
    });
  });
});
