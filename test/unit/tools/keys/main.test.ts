import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorLine } from '../../../../tools/keys/main';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { toCompactDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';
import {
  decide,
  digestKeyIdOf,
  GENERATED_KEY_PATTERN,
  plainKeysText,
  runCli,
} from '../../../support/keys-cli';

const SEED = plainKeysText({ demo: [DEMO_KEY, DEMO_NEXT_KEY], partner: [PARTNER_KEY] });
const SEEDED_KEYS = [DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY];
/** How list ends an app's line when neither the app nor the operator gives a rate limit. */
const DEFAULT_LIMIT = "; rate limit: the local server's APP_RATE_LIMIT, if set";
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

const keys = (...argv: string[]) => runCli([...argv, '--file', file], {});
const stored = (): string => readFileSync(file, 'utf8');

function accepts(appId: string, appKey: string): boolean {
  return decide(stored(), appId, appKey).ok;
}

describe('add-app and rotate', () => {
  it('add-app prints the fresh key once, then a line naming the app and key id, and stores only its digest', async () => {
    const result = await keys('add-app', 'shop');

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const [key = '', info, ...rest] = result.stdout.split('\n');
    expect(key).toMatch(GENERATED_KEY_PATTERN);
    expect(info).toBe(
      `app shop: created with key ${digestKeyIdOf(key)}; the key above is shown only this once`,
    );
    expect(rest).toEqual(['']);
    expect(result.stdout.split(key)).toHaveLength(2);
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

  it('--hash, the default now, stores only the compact digest form, which authenticates the printed key', async () => {
    const result = await keys('rotate', 'partner', '--hash', '--json');

    const { key } = JSON.parse(result.stdout) as { key: string };
    expect(stored()).not.toContain(key);
    expect(stored()).toContain(`"${toCompactDigestForm(key)}"`);
    expect(accepts('partner', key)).toBe(true);
    expect(accepts('partner', PARTNER_KEY)).toBe(true);
  });

  it('--plain stores the key itself, only when asked, and says so', async () => {
    const result = await keys('add-app', 'shop', '--plain');

    const [key = '', info] = result.stdout.split('\n');
    expect(info).toBe(
      `app shop: created with key ${keyIdOf(key)} (stored in plain text: --plain); the key above is shown only this once`,
    );
    expect(stored()).toContain(`"shop":["${key}"]`);
    expect(accepts('shop', key)).toBe(true);
  });

  it('refuses --plain with --hash in one line, writing nothing', async () => {
    const result = await keys('add-app', 'shop', '--plain', '--hash');

    expect(result).toEqual({ code: 2, stdout: '', stderr: 'error: give --plain or --hash, not both\n' });
    expect(stored()).toBe(SEED);
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
  it('shows every app with its networks, its rate limit and its key ids, never a key', async () => {
    const result = await keys('list');

    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout:
        `demo: any network${DEFAULT_LIMIT}\n  ${keyIdOf(DEMO_KEY)}  never\n  ${keyIdOf(DEMO_NEXT_KEY)}  never\n` +
        `partner: any network${DEFAULT_LIMIT}\n  ${keyIdOf(PARTNER_KEY)}  never\n`,
    });
  });

  it('says so when there are no apps', async () => {
    writeFileSync(file, '{}');

    expect(await keys('list')).toEqual({ code: 0, stdout: 'no apps\n', stderr: '' });
  });
});

describe('revoke and remove-app', () => {
  it('revoke removes one key, confirms it, and the revoked key no longer authenticates', async () => {
    const result = await keys('revoke', 'demo', keyIdOf(DEMO_KEY));

    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: `app demo: revoked key ${keyIdOf(DEMO_KEY)}; valid keys: ${keyIdOf(DEMO_NEXT_KEY)}\n`,
    });
    expect(accepts('demo', DEMO_KEY)).toBe(false);
    expect(accepts('demo', DEMO_NEXT_KEY)).toBe(true);
  });

  it('revoke --force removes the last key and the app with it', async () => {
    const result = await keys('revoke', 'partner', keyIdOf(PARTNER_KEY), '--force', '--json');

    expect(result.stdout).toBe(
      JSON.stringify({ appId: 'partner', revokedKeyId: keyIdOf(PARTNER_KEY), keyIds: [] }) + '\n',
    );
    expect(JSON.parse(stored())).toEqual({ demo: [DEMO_KEY, DEMO_NEXT_KEY] });
  });

  it('remove-app removes the app and names the key ids it had', async () => {
    const result = await keys('remove-app', 'demo');

    expect(result.stdout).toBe(
      `removed app demo and its keys ${keyIdOf(DEMO_KEY)} ${keyIdOf(DEMO_NEXT_KEY)}\n`,
    );
    expect(JSON.parse(stored())).toEqual({ partner: [PARTNER_KEY] });
  });

  it('remove-app --json prints {appId, removedKeyIds}', async () => {
    const result = await keys('remove-app', 'partner', '--json');

    expect(result.stdout).toBe(
      JSON.stringify({ appId: 'partner', removedKeyIds: [keyIdOf(PARTNER_KEY)] }) + '\n',
    );
  });
});

describe('errors', () => {
  it.each<[string, string[], number, string]>([
    ['an unknown app', ['rotate', 'ghost'], 1, 'error: unknown app: ghost'],
    ['an existing app', ['add-app', 'demo'], 1, 'error: app already exists: demo'],
    ['an unknown key id', ['revoke', 'demo', '000000000000'], 1, 'error: app demo has no key 000000000000'],
    [
      'the last key without --force',
      ['revoke', 'partner', keyIdOf(PARTNER_KEY)],
      1,
      `error: key ${keyIdOf(PARTNER_KEY)} is the last key of app partner; use --force to remove it`,
    ],
  ])('%s: one line on stderr, exit %i, nothing printed or changed', async (_label, argv, code, line) => {
    const result = await keys(...argv);

    expect(result).toEqual({ code, stdout: '', stderr: `${line}\n` });
    expect(stored()).toBe(SEED);
  });

  it.each([
    ['not JSON', `{"demo": "${DEMO_KEY}"`, 'error: the secret is not valid JSON'],
    [
      'a bad key entry',
      JSON.stringify({ demo: [DEMO_KEY, 'short'] }),
      "error: the secret's entry #1 (app demo), key #2: key length must be 16 to 512 characters",
    ],
  ])(
    'refuses a key file that is %s without quoting it, and leaves it as it was',
    async (_label, content, line) => {
      writeFileSync(file, content);

      const results = [await keys('list'), await keys('rotate', 'demo')];

      for (const result of results) {
        expect(result).toEqual({ code: 1, stdout: '', stderr: `${line}\n` });
        expect(result.stderr).not.toContain(DEMO_KEY);
      }
      expect(stored()).toBe(content);
    },
  );

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

  it('no error output ever holds a stored key', async () => {
    const attempts = [
      await keys('rotate', 'ghost'),
      await keys('revoke', 'demo', '000000000000'),
      await keys('add-app', 'partner'),
      await runCli(['list'], {}),
    ];

    for (const result of attempts) {
      expect(result.code).not.toBe(0);
      for (const key of SEEDED_KEYS) expect(result.stderr + result.stdout).not.toContain(key);
    }
  });
});

describe('errorLine', () => {
  it('cuts an unexpected error to one line and masks anything shaped like a generated key', () => {
    const leaked = 'payk_' + 'A'.repeat(43);

    const line = errorLine(new TypeError(`cannot read ${leaked}\n    at somewhere (file.ts:1:1)`));

    expect(line).toBe('error: unexpected TypeError: cannot read payk_…\n');
  });

  it('describes a thrown non-error without guessing', () => {
    expect(errorLine('a string')).toBe('error: unexpected failure\n');
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
