/**
 * The key CLI's expiry, grace, prune, allowlist and rate limit commands and its size guard, run in-process on a key file with
 * a fixed clock; each change is checked by how the payment Lambda's decision sees the file afterwards.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';
import { run } from '../../../../tools/keys/main';
import {
  decide,
  digestKeyIdOf,
  keysTextOfSize,
  plainKeysText,
  runCli,
  storedKeysOf,
} from '../../../support/keys-cli';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const DAY = 86_400_000;
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
const newKeyOf = (stdout: string): string => (JSON.parse(stdout) as { key: string }).key;

describe('rotate --grace', () => {
  it('keeps the old keys valid until the grace ends, then the Lambda refuses them as expired_key', async () => {
    const result = await keys('rotate', 'demo', '--grace', '7d', '--json');

    expect(result.code).toBe(0);
    const key = newKeyOf(result.stdout);
    const graceEnd = NOW + 7 * DAY;
    expect([DEMO_KEY, DEMO_NEXT_KEY, key].map((k) => verdict('demo', k, graceEnd - 1))).toEqual([
      'ok',
      'ok',
      'ok',
    ]);
    expect([DEMO_KEY, DEMO_NEXT_KEY, key].map((k) => verdict('demo', k, graceEnd))).toEqual([
      'expired_key',
      'expired_key',
      'ok',
    ]);
    expect(verdict('partner', PARTNER_KEY, graceEnd)).toBe('ok');
  });

  it('--grace 0s expires the old keys at once, and list still shows them as expired until prune', async () => {
    const rotated = await keys('rotate', 'demo', '--grace', '0s', '--json');
    const key = newKeyOf(rotated.stdout);

    expect(verdict('demo', DEMO_KEY)).toBe('expired_key');
    expect(verdict('demo', key)).toBe('ok');
    expect((await keys('list')).stdout).toContain(
      `demo: any network; rate limit: the local server's APP_RATE_LIMIT, if set\n` +
        `  ${keyIdOf(DEMO_KEY)}  2026-06-01T12:00:00Z  expired\n` +
        `  ${keyIdOf(DEMO_NEXT_KEY)}  2026-06-01T12:00:00Z  expired\n` +
        `  ${digestKeyIdOf(key)}  never  (stored as its sha256 digest)\n`,
    );

    const pruned = await keys('prune');

    expect(pruned).toEqual({
      code: 0,
      stderr: '',
      stdout: `app demo: removed expired keys ${keyIdOf(DEMO_KEY)} ${keyIdOf(DEMO_NEXT_KEY)}\n`,
    });
    expect(verdict('demo', DEMO_KEY)).toBe('wrong_key');
    expect(verdict('demo', key)).toBe('ok');
  });

  it('with --expires-in, the new key carries its own expiry', async () => {
    const result = await keys('rotate', 'partner', '--expires-in', '1h', '--grace', '1h', '--json');

    const key = newKeyOf(result.stdout);
    expect(JSON.parse(result.stdout)).toMatchObject({
      expires: '2026-06-01T13:00:00Z',
      othersExpireBy: '2026-06-01T13:00:00Z',
    });
    expect([verdict('partner', key, NOW + 3_599_999), verdict('partner', key, NOW + 3_600_000)]).toEqual([
      'ok',
      'expired_key',
    ]);
  });
});

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

describe('add-app --expires-in and expire', () => {
  it('add-app --expires-in makes a key the Lambda refuses from its expiry on', async () => {
    const result = await keys('add-app', 'shop', '--expires-in', '30m', '--json');

    const key = newKeyOf(result.stdout);
    expect([verdict('shop', key, NOW + 1_799_999), verdict('shop', key, NOW + 1_800_000)]).toEqual([
      'ok',
      'expired_key',
    ]);
  });

  it('expire --at, then --never, then --in 0s, each taking effect as the Lambda sees it', async () => {
    const keyId = keyIdOf(PARTNER_KEY);

    const at = await keys('expire', 'partner', keyId, '--at', '2026-06-02T14:00:00+02:00');
    expect(at.stdout).toBe(`app partner: key ${keyId} expires at 2026-06-02T12:00:00Z (in 1d)\n`);
    expect(verdict('partner', PARTNER_KEY, NOW + DAY)).toBe('expired_key');

    const never = await keys('expire', 'partner', keyId, '--never');
    expect(never.stdout).toBe(`app partner: key ${keyId} no longer expires\n`);
    expect(verdict('partner', PARTNER_KEY, NOW + 1_000 * DAY)).toBe('ok');
    expect(stored()).toBe(SEED);

    const now = await keys('expire', 'partner', keyId, '--in', '0s');
    expect(now.stdout).toBe(
      `app partner: key ${keyId} has expired (at 2026-06-01T12:00:00Z); list still shows it, prune removes it\n`,
    );
    expect(verdict('partner', PARTNER_KEY)).toBe('expired_key');
  });

  it('prune removes an app whose every key expired, and says so', async () => {
    await keys('expire', 'partner', keyIdOf(PARTNER_KEY), '--in', '0s');

    const result = await keys('prune', 'partner', '--json');

    expect(JSON.parse(result.stdout)).toEqual({
      removed: [{ appId: 'partner', keyId: keyIdOf(PARTNER_KEY) }],
      removedApps: ['partner'],
    });
    expect(verdict('partner', PARTNER_KEY)).toBe('unknown_app');
  });
});

describe('allow and disallow', () => {
  it('fences an app to its networks: other sources get source_not_allowed, an IPv4-mapped peer counts as IPv4', async () => {
    const result = await keys('allow', 'demo', '203.0.113.0/24', '2001:db8::/32');

    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: 'app demo: may call only from 203.0.113.0/24 2001:db8::/32\n',
    });
    expect(verdict('demo', DEMO_KEY, NOW, '203.0.113.9')).toBe('ok');
    expect(verdict('demo', DEMO_KEY, NOW, '::ffff:203.0.113.9')).toBe('ok');
    expect(verdict('demo', DEMO_KEY, NOW, '2001:db8:1::5')).toBe('ok');
    expect(verdict('demo', DEMO_KEY, NOW, '198.51.100.1')).toBe('source_not_allowed');
    expect(verdict('demo', DEMO_KEY, NOW, undefined)).toBe('source_not_allowed');
    expect(verdict('partner', PARTNER_KEY, NOW, '198.51.100.1')).toBe('ok');
  });

  it('disallow of the last block leaves no network, said plainly; allow --any opens it again', async () => {
    await keys('allow', 'demo', '203.0.113.0/24');

    const closed = await keys('disallow', 'demo', '203.0.113.0/24');

    expect(closed.stdout).toBe(
      'app demo: its allowlist is now empty, so it may call from no network: every request is refused ' +
        '(allow demo <cidr> adds a network; allow demo --any lifts the allowlist)\n',
    );
    expect(verdict('demo', DEMO_KEY, NOW, '203.0.113.9')).toBe('source_not_allowed');
    expect((await keys('list')).stdout).toContain(
      "demo: no network (its allowlist is empty: every request is refused); rate limit: the local server's APP_RATE_LIMIT, if set\n",
    );

    const opened = await keys('allow', 'demo', '--any', '--json');

    expect(opened.stdout).toBe('{"appId":"demo","allowedCidrs":null}\n');
    expect(verdict('demo', DEMO_KEY, NOW, '198.51.100.1')).toBe('ok');
    expect(stored()).toBe(SEED);
  });
});

describe('limit', () => {
  /** The limit the payment Lambda would apply to the app from the file as it is now; undefined: the stack's. */
  const servedLimit = (appId: string) => parseKeyring(stored()).keyring.get(appId)?.rateLimit;

  it('gives an app its own limit, which the keyring serves; the other apps keep the default', async () => {
    const result = await keys('limit', 'partner', '--per-second', '20', '--burst', '40');

    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout:
        'app partner: its own rate limit is now 20/s, burst 40 ' +
        '(in effect at once, where the local server runs with APP_RATE_LIMIT)\n',
    });
    expect(servedLimit('partner')).toEqual({ perSecond: 20, burst: 40 });
    expect(servedLimit('demo')).toBeUndefined();
    expect(verdict('partner', PARTNER_KEY)).toBe('ok');
  });

  it('writes a burst left out as left out, and list shows the burst the Lambda applies', async () => {
    await keys('limit', 'demo', '--per-second', '0.5');

    expect(JSON.parse(stored())).toEqual({
      demo: { keys: [DEMO_KEY, DEMO_NEXT_KEY], rateLimit: { perSecond: 0.5 } },
      partner: [PARTNER_KEY],
    });
    expect(servedLimit('demo')).toEqual({ perSecond: 0.5, burst: 1 });
    expect((await keys('list')).stdout).toBe(
      "demo: any network; rate limit: 0.5/s, burst 1 (this app's own)\n" +
        `  ${keyIdOf(DEMO_KEY)}  never\n  ${keyIdOf(DEMO_NEXT_KEY)}  never\n` +
        "partner: any network; rate limit: the local server's APP_RATE_LIMIT, if set\n" +
        `  ${keyIdOf(PARTNER_KEY)}  never\n`,
    );
  });

  it("list --default-limit shows the default's numbers for the apps without their own, in text and JSON", async () => {
    await keys('limit', 'demo', '--per-second', '20', '--burst', '40');

    const text = await keys('list', '--default-limit', '50', '--default-burst', '100');
    const json = await keys('list', '--default-limit', '50', '--json');

    expect(text.stdout).toContain("demo: any network; rate limit: 20/s, burst 40 (this app's own)\n");
    expect(text.stdout).toContain(
      "partner: any network; rate limit: 50/s, burst 100 (the local server's default)\n",
    );
    expect(
      (JSON.parse(json.stdout) as { appId: string; rateLimit: unknown }[]).map((app) => app.rateLimit),
    ).toEqual([
      { perSecond: 20, burst: 40, source: 'app' },
      { perSecond: 50, burst: 50, source: 'default' },
    ]);
    expect(stored()).toBe(
      JSON.stringify({
        demo: { keys: [DEMO_KEY, DEMO_NEXT_KEY], rateLimit: { perSecond: 20, burst: 40 } },
        partner: [PARTNER_KEY],
      }),
    );
  });

  it("--default removes the app's own limit, keeping its allowlist; the file is as before once that goes too", async () => {
    await keys('allow', 'demo', '203.0.113.0/24');
    await keys('limit', 'demo', '--per-second', '5');

    const result = await keys('limit', 'demo', '--default', '--json');

    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: '{"appId":"demo","rateLimit":{"source":"default"}}\n',
    });
    expect(servedLimit('demo')).toBeUndefined();
    expect(verdict('demo', DEMO_KEY, NOW, '203.0.113.9')).toBe('ok');
    expect(verdict('demo', DEMO_KEY, NOW, '198.51.100.1')).toBe('source_not_allowed');

    await keys('allow', 'demo', '--any');

    expect(stored()).toBe(SEED);
  });

  it('--json answers {appId, rateLimit: {perSecond, burst, source}}', async () => {
    const result = await keys('limit', 'demo', '--per-second', '2.5', '--json');

    expect(JSON.parse(result.stdout)).toEqual({
      appId: 'demo',
      rateLimit: { perSecond: 2.5, burst: 3, source: 'app' },
    });
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
