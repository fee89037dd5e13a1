import { parseChangeFile, type ChangeFileReading } from '../../../../tools/keys/change-file';

const NOW = Date.parse('2026-06-01T00:00:00Z');
const DAY_MS = 86_400_000;
const PASTED_KEY = 'payk_' + 'Q'.repeat(43);

const parse = (text: string): ChangeFileReading => parseChangeFile(text, NOW);
const file = (...changes: unknown[]): string => JSON.stringify({ changes }, null, 2);
const problemsOf = (text: string) => {
  const reading = parse(text);
  return reading.ok
    ? []
    : reading.problems.map(({ line, column, message }) => `${line}:${column} ${message}`);
};

describe('parseChangeFile', () => {
  it('reads every kind of change, with the line each starts on', () => {
    const reading = parse(
      JSON.stringify(
        {
          format: 'payment-api-key-changes/1',
          changes: [
            { op: 'add', app: 'shop' },
            {
              op: 'add',
              app: 'partner-a',
              hash: true,
              expiresIn: '90d',
              allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
              rateLimit: { perSecond: 20, burst: 40 },
            },
            { op: 'add', app: 'partner-b', expires: '2026-12-24T00:00:00Z', plain: true },
            { op: 'rotate', app: 'partner-c', grace: '7d', expiresIn: '365d' },
            { op: 'revoke', app: 'partner-d', keyId: '0a1b2c3d4e5f', force: true },
            { op: 'remove', app: 'partner-e' },
          ],
        },
        null,
        2,
      ),
    );

    expect(reading).toEqual({
      ok: true,
      changes: [
        { op: 'add', appId: 'shop', line: 4, number: 1, storage: 'digest' },
        {
          op: 'add',
          appId: 'partner-a',
          line: 8,
          number: 2,
          storage: 'digest',
          expiry: { kind: 'in', ms: 90 * DAY_MS },
          allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
          rateLimit: { perSecond: 20, burst: 40 },
        },
        {
          op: 'add',
          appId: 'partner-b',
          line: 22,
          number: 3,
          storage: 'plain',
          expiry: { kind: 'at', at: Date.parse('2026-12-24T00:00:00Z') },
        },
        {
          op: 'rotate',
          appId: 'partner-c',
          line: 28,
          number: 4,
          storage: 'digest',
          graceMs: 7 * DAY_MS,
          expiry: { kind: 'in', ms: 365 * DAY_MS },
        },
        { op: 'revoke', appId: 'partner-d', line: 34, number: 5, keyId: '0a1b2c3d4e5f', force: true },
        { op: 'remove', appId: 'partner-e', line: 40, number: 6 },
      ],
    });
  });

  it.each<[string, string, string[]]>([
    [
      'not JSON at all',
      'changes: []',
      ['1:1 not valid JSON: invalid symbol', '1:8 not valid JSON: value expected'],
    ],
    ['a comment', '{"changes": [ // one\n]}', ['1:15 not valid JSON: invalid comment token']],
    [
      'a trailing comma',
      '{"changes": [{"op": "remove", "app": "a"},]}',
      ['1:43 not valid JSON: value expected'],
    ],
    ['an empty file', '', ['1:1 not valid JSON: value expected']],
    ['a list at the top', '[]', ['1:1 the file must be a JSON object']],
    ['no changes', '{}', ['1:1 the file needs "changes", a list of changes']],
    ['empty changes', '{"changes": []}', ['1:13 "changes" is empty: nothing to apply']],
    [
      'an unknown top-level field, never named, with the known one it is closest to',
      '{"changes": [{"op": "remove", "app": "a"}], "chnages": 1}',
      ['1:45 field #2 of the file is not one of "format", "changes": did you mean "changes"?'],
    ],
    [
      'a misspelt field of a change',
      '{"changes": [{"op": "add", "app": "a", "rateLimt": {"perSecond": 1}}]}',
      [
        '1:40 field #3 of change #1 (add) is not one of "op", "app", "plain", "hash", "expiresIn", "expires", "allowedCidrs", ' +
          '"rateLimit": did you mean "rateLimit"?',
      ],
    ],
    [
      'a field far from every known one (a pasted key, say), with no suggestion',
      '{"changes": [{"op": "remove", "app": "a", "payk_0123456789abcdefghij": true}]}',
      ['1:43 field #3 of change #1 (remove) is not one of "op", "app"'],
    ],
    [
      'another format',
      '{"format": "payment-api-key-changes/2", "changes": [{"op": "remove", "app": "a"}]}',
      ['1:12 "format" must be "payment-api-key-changes/1"'],
    ],
    ['no op', file({ app: 'a' }), ['3:5 change #1 needs "op": one of "add", "rotate", "revoke", "remove"']],
    [
      'an unknown op',
      file({ op: 'delete', app: 'a' }),
      ['4:13 change #1 needs "op": one of "add", "rotate", "revoke", "remove"'],
    ],
    [
      'a field another op takes',
      file({ op: 'remove', app: 'a', grace: '7d' }),
      ['6:7 field #3 of change #1 (remove) is not one of "op", "app"'],
    ],
    [
      'a repeated field (JSON.parse would keep the last)',
      '{"changes": [{"op": "add", "app": "a", "op": "remove"}]}',
      ['1:40 field #3 of change #1 repeats a field named before it'],
    ],
    ['no app', file({ op: 'remove' }), ['3:5 change #1 needs "app", the app id as a string']],
    [
      'an app id pasted with a key',
      file({ op: 'add', app: PASTED_KEY }),
      [
        '5:14 invalid app id in change #1: must not start with "payk_" (in any case), the prefix of generated keys',
      ],
    ],
    [
      'an app named twice',
      file({ op: 'add', app: 'shop' }, { op: 'remove', app: 'shop' }),
      ['7:5 change #2 names app shop, as change #1 (line 3) does: give each app one change'],
    ],
    [
      'a duration that is none',
      file({ op: 'rotate', app: 'a', grace: '7 days' }),
      [
        '6:16 "grace" of change #1 must be one whole number and a unit, such as 90d, 24h, 30m or 45s (at most 36500d)',
      ],
    ],
    [
      'an expiry already passed',
      file({ op: 'add', app: 'a', expires: '2026-01-01T00:00:00Z' }),
      ['6:18 "expires" of change #1 has passed: a new key that has already expired is of no use'],
    ],
    [
      'two expiries',
      file({ op: 'add', app: 'a', expires: '2027-01-01T00:00:00Z', expiresIn: '1d' }),
      ['6:18 change #1 gives both "expiresIn" and "expires": give one'],
    ],
    [
      'a CIDR block with host bits',
      file({ op: 'add', app: 'a', allowedCidrs: ['203.0.113.0/24', '203.0.113.7/24'] }),
      ['8:9 "allowedCidrs" #2 of change #1: host bits are set: give the network address of the block'],
    ],
    [
      'an empty allowlist',
      file({ op: 'add', app: 'a', allowedCidrs: [] }),
      [
        '6:23 "allowedCidrs" of change #1 is empty, which allows no network: leave it out for any network, or give blocks',
      ],
    ],
    [
      'a rate limit without a rate',
      file({ op: 'add', app: 'a', rateLimit: { burst: 4 } }),
      [
        '6:20 "rateLimit"."perSecond" must be a number of requests per second from 0.001 to 10000 (change #1)',
      ],
    ],
    [
      'a key pasted where the key id belongs',
      file({ op: 'revoke', app: 'a', keyId: PASTED_KEY }),
      [
        '6:16 change #1: invalid key id: expected the 12 hex characters that "list" shows, not a key ("keyId")',
      ],
    ],
    [
      'hash that is not a boolean',
      file({ op: 'add', app: 'a', hash: 'yes' }),
      ['6:15 "hash" of change #1 must be true or false'],
    ],
    [
      'hash: false, which once meant plain text',
      file({ op: 'rotate', app: 'a', hash: false }),
      [
        '6:15 "hash": false of change #1 no longer means plain text: new keys are stored as digests; give "plain": true to store the key itself, on purpose',
      ],
    ],
    [
      'plain and hash together',
      file({ op: 'add', app: 'a', plain: true, hash: true }),
      ['7:15 change #1 gives both "plain" and "hash": give one'],
    ],
    [
      'a key given in the file (refused, not stored as its digest)',
      file({ op: 'add', app: 'a', key: PASTED_KEY }),
      [
        '6:14 change #1 gives a "key": apply makes each new key itself and stores only its digest; a key written in a file is not taken (delete it from the file, and treat it as leaked if it was ever used)',
      ],
    ],
  ])('refuses %s, locating it', (_label, text, problems) => {
    expect(problemsOf(text)).toEqual(problems);
  });

  it('finds every problem of a file at once, and quotes none of its text but valid app ids', () => {
    const text = file(
      { op: 'add', app: PASTED_KEY },
      { op: 'revoke', app: 'b', keyId: PASTED_KEY.toLowerCase() },
      { op: 'rotate', app: 'c', grace: PASTED_KEY },
      { op: 'add', app: 'd', [PASTED_KEY]: true },
    );

    const problems = problemsOf(text);

    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).not.toContain(PASTED_KEY);
    expect(problems.join('\n').toLowerCase()).not.toContain(PASTED_KEY.toLowerCase());
  });

  it('refuses nesting thousands deep anywhere with its line and column, never a stack overflow', () => {
    const deep = `{"changes": [\n  {"op": "add", "app": "a", "rateLimit": ${'['.repeat(5_000)}1${']'.repeat(5_000)}}]}`;
    const quoted = `{"changes": [{"op": "remove", "app": "a", "note": "${'['.repeat(5_000)}"}]}`;

    expect(problemsOf(deep)).toEqual([
      '2:55 nested deeper than 16 levels, which no change needs; nothing else was read',
    ]);
    expect(problemsOf(quoted)).toEqual(['1:43 field #3 of change #1 (remove) is not one of "op", "app"']);
  });
});
