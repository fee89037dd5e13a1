/**
 * The key CLI on a key file with a fixed clock: what each command stores and prints, the instants it writes, bad input
 * that changes nothing and prints no key, and the size guard on its write path. What each command does to a document
 * is proved where it is decided (test/unit/shared/keys/key-rules.test.ts, test/unit/tools/keys/changes.test.ts, how
 * the Lambda judges it in authenticate.test.ts), and what each command prints by the goldens
 * (test/integration/keys/cli-golden.test.ts).
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { toCompactDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';
import { run } from '../../../../tools/keys/main';
import {
  decide,
  digestKeyIdOf,
  GENERATED_KEY_PATTERN,
  keysTextOfSize,
  plainKeysText,
  runCli,
  storedKeysOf,
} from '../../../support/keys-cli';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const SEED = plainKeysText({ demo: [DEMO_KEY, DEMO_NEXT_KEY], partner: [PARTNER_KEY] });
const SEEDED_KEYS = [DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY];
/** The shape of the key the stack generates for the demo app: 48 letters and digits, no prefix. */
const STACK_SHAPED_KEY = 'Q7tZk2WmX9aB4cD8eF1gH3jK5lM6nP0rS2uV4wY7zA9bC1dE';

let directory: string;
let file: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-cli-'));
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
const accepts = (appId: string, appKey: string): boolean => verdict(appId, appKey) === 'ok';

describe('add-app and rotate', () => {
  it('add-app stores only the digest of the key it prints', async () => {
    const result = await keys('add-app', 'shop');

    const [key = ''] = result.stdout.split('\n');
    expect(key).toMatch(GENERATED_KEY_PATTERN);
    expect(stored()).not.toContain(key);
    expect(stored()).toContain(`"shop":["${toCompactDigestForm(key)}"]`);
    expect(accepts('shop', key)).toBe(true);
  });

  it('rotate --json prints exactly {appId, keyId, key} and keeps the old keys valid', async () => {
    const result = await keys('rotate', 'demo', '--json');

    expect(result.code).toBe(0);
    const output = JSON.parse(result.stdout) as Record<string, unknown>;
    expect(Object.keys(output)).toEqual(['appId', 'keyId', 'key']);
    const key = String(output.key);
    expect(output).toEqual({ appId: 'demo', keyId: digestKeyIdOf(key), key });
    expect(key).toMatch(GENERATED_KEY_PATTERN);
    expect(result.stdout).toBe(JSON.stringify(output) + '\n');
    expect([DEMO_KEY, DEMO_NEXT_KEY, key].map((k) => accepts('demo', k))).toEqual([true, true, true]);
  });

  it('--plain stores the key itself, only when asked', async () => {
    const result = await keys('add-app', 'shop', '--plain');

    const [key = ''] = result.stdout.split('\n');
    expect(stored()).toContain(`"shop":["${key}"]`);
    expect(accepts('shop', key)).toBe(true);
  });

  it('add-app creates a missing key file (0600) and its directory (0700)', async () => {
    const nested = join(directory, 'new', 'keys.json');

    const result = await runCli(['add-app', 'demo', '--json'], { KEYS_FILE: nested });

    expect(result.code).toBe(0);
    const { key } = JSON.parse(result.stdout) as { key: string };
    expect(decide(readFileSync(nested, 'utf8'), 'demo', key).ok).toBe(true);
    expect(statSync(nested).mode & 0o777).toBe(0o600);
    expect(statSync(join(directory, 'new')).mode & 0o777).toBe(0o700);
  });
});

describe('list', () => {
  it('says so when there are no apps', async () => {
    writeFileSync(file, '{}');

    expect(await keys('list')).toEqual({ code: 0, stdout: 'no apps\n', stderr: '' });
  });
});

describe('revoke and remove-app', () => {
  it('revoke --force removes the last key and the app with it', async () => {
    const result = await keys('revoke', 'partner', keyIdOf(PARTNER_KEY), '--force', '--json');

    expect(result.stdout).toBe(
      JSON.stringify({ appId: 'partner', revokedKeyId: keyIdOf(PARTNER_KEY), keyIds: [] }) + '\n',
    );
    expect(JSON.parse(stored())).toEqual({ demo: [DEMO_KEY, DEMO_NEXT_KEY] });
  });

  it('remove-app --json prints {appId, removedKeyIds}', async () => {
    const result = await keys('remove-app', 'partner', '--json');

    expect(result.stdout).toBe(
      JSON.stringify({ appId: 'partner', removedKeyIds: [keyIdOf(PARTNER_KEY)] }) + '\n',
    );
  });
});

describe('errors', () => {
  it('refuses a key file that is not JSON without quoting it, and leaves it as it was', async () => {
    const content = `{"demo": "${DEMO_KEY}"`;
    writeFileSync(file, content);

    const results = [await keys('list'), await keys('rotate', 'demo')];

    for (const result of results) {
      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: the secret is not valid JSON\n' });
      expect(result.stderr).not.toContain(DEMO_KEY);
    }
    expect(stored()).toBe(content);
  });

  it('never lists or rotates an app whose id has the shape of a key, nor prints that id', async () => {
    writeFileSync(file, JSON.stringify({ [STACK_SHAPED_KEY]: [DEMO_KEY], demo: [DEMO_NEXT_KEY] }));

    const results = [await keys('list'), await keys('list', '--json'), await keys('rotate', 'demo')];

    for (const result of results) {
      expect(result.code).toBe(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toMatch(/^error: the secret's entry #1: app id [^\n]*\n$/);
      expect(result.stderr).not.toContain(STACK_SHAPED_KEY.slice(0, 16));
    }
  });
});

describe('help', () => {
  it.each([
    ['limit', ['--per-second <n>', '--burst <m>', '--default'], 'limit partner-0001 --per-second 20'],
    ['rotate', ['--grace <duration>', '--expires-in <duration>', '--hash'], 'rotate partner-0001 --grace 7d'],
    ['apply', ['--keys-out <path>', '--dry-run'], 'apply changes.json --keys-out .local/'],
  ])(
    '%s --help gives its own options, an example and the environment equivalents',
    async (name, options, example) => {
      const [flag, command] = [await runCli([name, '--help'], {}), await runCli(['help', name], {})];

      expect(flag).toEqual(command);
      expect(flag.stdout).toMatch(new RegExp(`^Usage: keys ${name} `));
      for (const option of options) expect(flag.stdout).toContain(`  ${option} `);
      expect(flag.stdout).toContain(`npm run keys -- ${example}`);
      expect(flag.stdout).toMatch(/KEYS_STACK +as --stack/);
      expect(flag.stdout).toContain('--file <path>');
      expect(flag.stdout).not.toContain('--default-limit');
    },
  );
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

describe('bad input changes nothing', () => {
  it.each<[string, string[], number, string]>([
    [
      '--plain with --hash',
      ['add-app', 'shop', '--plain', '--hash'],
      2,
      'error: give --plain or --hash, not both',
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
