/**
 * The key CLI on a key file with a fixed clock: the instants it writes, bad input that changes nothing and prints no
 * key, and the size guard on its write path. What each command does to a document is proved where it is decided
 * (test/unit/shared/keys/key-rules.test.ts, test/unit/tools/keys/changes.test.ts, how the Lambda judges it in
 * authenticate.test.ts), and what each command prints by the goldens (test/integration/keys/cli-golden.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';
import { run } from '../../../../tools/keys/main';
import { decide, keysTextOfSize, plainKeysText, runCli, storedKeysOf } from '../../../support/keys-cli';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const SEED = plainKeysText({ demo: [DEMO_KEY, DEMO_NEXT_KEY], partner: [PARTNER_KEY] });
const SEEDED_KEYS = [DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY];

let directory: string;
let file: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-cli-rules-'));
  file = join(directory, 'keys.json');
  writeFileSync(file, SEED, { mode: 0o600 });
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const keys = (...argv: string[]) => runCli([...argv, '--file', file], {}, { now: () => NOW });
const stored = (): string => readFileSync(file, 'utf8');
/** Why the Lambda would refuse (or `ok`) this key at `now`, from `sourceIp`. */
const verdict = (appId: string, appKey: string, now = NOW, sourceIp?: string): string => {
  const decision = decide(stored(), appId, appKey, { now, ...(sourceIp === undefined ? {} : { sourceIp }) });
  return decision.ok ? 'ok' : decision.reason;
};

describe('instants written', () => {
  it('are whole seconds, rounded down, so that a key never outlives what was asked', async () => {
    const clock = NOW + 999;
    const run = (...argv: string[]) => runCli([...argv, '--file', file], {}, { now: () => clock });

    const rotated = await run('rotate', 'demo', '--grace', '1h', '--expires-in', '1d', '--json');
    const expired = await run('expire', 'partner', keyIdOf(PARTNER_KEY), '--in', '0s');

    expect(JSON.parse(rotated.stdout)).toMatchObject({
      expires: '2026-06-02T12:00:00Z',
      othersExpireBy: '2026-06-01T13:00:00Z',
    });
    expect(expired.stdout).toContain('has expired (at 2026-06-01T12:00:00Z)');
    expect(verdict('partner', PARTNER_KEY, clock)).toBe('expired_key');
  });
});

describe('bad input changes nothing', () => {
  it.each<[string, string[], number, string]>([
    [
      'a duration without a unit',
      ['rotate', 'demo', '--grace', '7'],
      2,
      'error: invalid --grace: expected one whole number and a unit, such as 90d, 24h, 30m or 45s (at most 36500d)',
    ],
    [
      'a date-time without an offset',
      ['expire', 'demo', keyIdOf(DEMO_KEY), '--at', '2026-12-24T00:00:00'],
      2,
      'error: invalid --at: expected an RFC 3339 date-time with Z or an offset, such as 2026-12-24T00:00:00Z',
    ],
    [
      'an invalid CIDR block',
      ['allow', 'demo', '10.0.0.1/8'],
      2,
      'error: CIDR block #1 is not valid: host bits are set: give the network address of the block',
    ],
    [
      'a key id the app does not have',
      ['expire', 'demo', keyIdOf(PARTNER_KEY), '--never'],
      1,
      `error: app demo has no key ${keyIdOf(PARTNER_KEY)}`,
    ],
    ['an unknown app for allow', ['allow', 'ghost', '10.0.0.0/8'], 1, 'error: unknown app: ghost'],
    ['an unknown app for prune', ['prune', 'ghost'], 1, 'error: unknown app: ghost'],
    ['an unknown app for limit', ['limit', 'ghost', '--per-second', '5'], 1, 'error: unknown app: ghost'],
    ['an unknown app for limit --default', ['limit', 'ghost', '--default'], 1, 'error: unknown app: ghost'],
    [
      'a rate out of range',
      ['limit', 'demo', '--per-second', '20000'],
      2,
      'error: --per-second must be a number of requests per second from 0.001 to 10000',
    ],
    [
      'a burst that is not a whole number',
      ['limit', 'demo', '--per-second', '5', '--burst', '1.5'],
      2,
      'error: --burst must be a whole number of requests from 1 to 100000',
    ],
    [
      'a key given as the rate',
      ['limit', 'demo', '--per-second', DEMO_KEY],
      2,
      'error: --per-second must be a number of requests per second from 0.001 to 10000',
    ],
    [
      'limit with neither a rate nor --default',
      ['limit', 'demo'],
      2,
      'error: limit needs exactly one of --per-second <n> or --default',
    ],
    [
      'a disallow on an app with no allowlist',
      ['disallow', 'demo', '10.0.0.0/8'],
      1,
      'error: app demo has no allowlist: it may call from any network',
    ],
    [
      'a key given as the key id',
      ['expire', 'demo', DEMO_KEY, '--never'],
      2,
      'error: invalid key id: expected the 12 hex characters that "list" shows, not a key',
    ],
  ])('%s: one line on stderr, exit %i, nothing printed or changed', async (_label, argv, code, line) => {
    const result = await keys(...argv);

    expect(result).toEqual({ code, stdout: '', stderr: `${line}\n` });
    expect(stored()).toBe(SEED);
  });

  it('a disallow of a block not listed changes nothing', async () => {
    await keys('allow', 'demo', '203.0.113.0/24');
    const before = stored();

    const result = await keys('disallow', 'demo', '203.0.113.0/24', '10.0.0.0/8');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'error: CIDR block #2 is not in the allowlist of app demo\n',
    });
    expect(stored()).toBe(before);
  });

  it('none of these commands prints a key', async () => {
    const results = [
      await keys('list'),
      await keys('list', '--json'),
      await keys('expire', 'demo', keyIdOf(DEMO_KEY), '--in', '0s'),
      await keys('prune'),
      await keys('prune', '--json'),
      await keys('allow', 'partner', '10.0.0.0/8'),
      await keys('disallow', 'partner', '10.0.0.0/8', '--json'),
      await keys('allow', 'partner', '--any'),
      await keys('expire', 'partner', keyIdOf(PARTNER_KEY), '--at', 'payk_' + 'Q'.repeat(43)),
      await keys('limit', 'demo', '--per-second', '5', '--burst', '10'),
      await keys('limit', 'demo', '--default', '--json'),
      await keys('limit', 'partner', '--per-second', 'payk_' + 'Q'.repeat(43)),
      await keys('list', '--default-limit', '5', '--json'),
    ];

    for (const result of results) {
      for (const key of SEEDED_KEYS) expect(result.stdout + result.stderr).not.toContain(key);
      expect(result.stdout + result.stderr).not.toContain('payk_');
    }
  });
});

describe('the size guard', () => {
  it('refuses a write over 65,536 bytes in one line, exit 1, printing no key and writing nothing', async () => {
    // The new key's entry, `,"d:<22>"`, is 27 bytes.
    const seed = keysTextOfSize(65_520);
    writeFileSync(file, seed);

    const result = await keys('rotate', 'demo');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'error: the keys would take 65,547 bytes, 11 over the 65,536 a secret can hold; nothing was written. ' +
        'Make room first: "prune" removes expired keys, "revoke" the keys clients no longer use (fewer keys per ' +
        'app), and a sha256: digest (71 characters) costs more than a plain generated key (42)\n',
    });
    expect(stored()).toBe(seed);
  });

  it('holds limit to the same bound: an app made an object past 65,536 bytes is refused, the file untouched', async () => {
    const seed = keysTextOfSize(65_500);
    writeFileSync(file, seed);

    const result = await keys('limit', 'demo', '--per-second', '20', '--burst', '40');

    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    // {"keys":[...],"rateLimit":{"perSecond":20,"burst":40}} is 49 bytes more than [...].
    expect(result.stderr).toMatch(
      /^error: the keys would take 65,549 bytes, 13 over the 65,536 a secret can hold; nothing was written\. /,
    );
    expect(stored()).toBe(seed);
  });

  it('writes from 80% full and warns on stderr, before it writes, with the bytes and the fill', async () => {
    writeFileSync(file, keysTextOfSize(60_000));

    const result = await keys('allow', 'demo', '10.0.0.0/8');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('app demo: may call only from 10.0.0.0/8\n');
    // The app becomes an object: {"keys":[...],"allowedCidrs":["10.0.0.0/8"]} is 39 bytes more than [...].
    expect(result.stderr).toMatch(
      /^warning: the keys will take 60,039 bytes, 91\.6% of the 65,536 a secret can hold \(5,497 left; [^\n]*\n$/,
    );
    expect(verdict('demo', DEMO_KEY, NOW, '10.1.2.3')).toBe('ok');
  });

  it.each([
    ['rotate', ['rotate', 'demo']],
    ['apply', ['apply', 'changes.json', '--keys-out', 'new-keys.jsonl']],
  ])('%s warns of a shard past 80%% while the shard is still as it was, then writes it', async (_, argv) => {
    const seed = keysTextOfSize(60_000);
    writeFileSync(file, seed);
    writeFileSync(
      join(directory, 'changes.json'),
      JSON.stringify({ changes: [{ op: 'rotate', app: 'demo' }] }),
    );
    const storedAtWarning: string[] = [];
    const stderr = {
      write: (text: string) => {
        if (text.startsWith('warning: ')) storedAtWarning.push(stored());
        return true;
      },
    };
    const args = argv.map((arg) =>
      arg.endsWith('.json') || arg.endsWith('.jsonl') ? join(directory, arg) : arg,
    );

    const code = await run([...args, '--file', file], {
      env: {},
      stdout: { write: () => true },
      stderr,
      now: () => NOW,
    });

    expect(code).toBe(0);
    expect(storedAtWarning).toEqual([seed]);
    expect(storedKeysOf(stored(), 'demo')).toHaveLength(storedKeysOf(seed, 'demo').length + 1);
  });
});
