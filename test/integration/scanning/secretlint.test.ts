/**
 * scanning/.secretlintrc.json, run with the secretlint CLI as a repository would run it, over fixtures written at
 * test time (never committed: a committed key, even a test one, is what the repository's own scan must flag):
 * a generated key in a .env, a JSON and a YAML file is found, and so is a legacy key; 1,000 strings that almost
 * match (no prefix, a wrong checksum, one character short) are not.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isWellFormedKey } from '../../../shared/keys/key-format';
import { generateKey } from '../../../shared/keys/key-material';

const PROJECT_ROOT = join(__dirname, '..', '..', '..');
const CONFIG = join(PROJECT_ROOT, 'scanning', '.secretlintrc.json');
const SECRETLINT = join(PROJECT_ROOT, 'node_modules', '.bin', 'secretlint');

interface FileResult {
  readonly filePath: string;
  readonly messages: readonly { readonly ruleId: string }[];
}

/** secretlint over every file of `directory` (run from it: secretlint scans below its working directory). */
async function scan(directory: string): Promise<Map<string, string[]>> {
  const result = await promisify(execFile)(
    SECRETLINT,
    ['--secretlintrc', CONFIG, '--format', 'json', '--maskSecrets', '**/*'],
    { cwd: directory, maxBuffer: 64 * 1024 * 1024 },
  ).catch((error: unknown) => {
    // Exit 1 means "found something": its report is on standard output like any other.
    const failed = error as { code?: unknown; stdout?: string; stderr?: string };
    if (failed.code === 1 && typeof failed.stdout === 'string') return { stdout: failed.stdout };
    throw error;
  });
  const files = JSON.parse(result.stdout) as FileResult[];
  return new Map(
    files.map((file) => [
      file.filePath.slice(directory.length + 1),
      file.messages.map((message) => message.ruleId),
    ]),
  );
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** The same key with one base62 character changed at `position`: its checksum no longer holds. */
function changedAt(key: string, position: number): string {
  const current = key.charAt(position);
  const replacement = BASE62.charAt((BASE62.indexOf(current) + 1 + (position % 61)) % 62);
  return key.slice(0, position) + replacement + key.slice(position + 1);
}

/** 1,000 strings that almost match, in three kinds, each checked to be no key of the format. */
function nearMisses(): string[] {
  const misses: string[] = [];
  for (let index = 0; misses.length < 1_000; index++) {
    const key = generateKey(index % 5 === 0 ? 'acme_live' : 'pay');
    const body = key.slice(key.length - 38);
    switch (index % 4) {
      case 0:
        misses.push(body); // no prefix
        break;
      case 1:
        misses.push(changedAt(key, key.length - 1 - (index % 6))); // a wrong checksum
        break;
      case 2:
        misses.push(changedAt(key, key.length - 38 + (index % 32))); // a random part changed: checksum wrong
        break;
      default:
        misses.push(key.slice(0, key.length - 1 - (index % 2)) + (index % 2 === 0 ? '' : key.slice(-1))); // short
    }
  }
  for (const miss of misses) if (isWellFormedKey(miss)) throw new Error('a near miss is a key');
  return misses;
}

function legacyKey(): string {
  const alphabet = `${BASE62}-_`;
  return `payk_${Array.from({ length: 43 }, (_, index) => alphabet.charAt((index * 37 + Date.now()) % 64)).join('')}`;
}

describe('scanning/.secretlintrc.json with secretlint', () => {
  let directory: string;

  beforeAll(() => {
    directory = mkdtempSync(join(tmpdir(), 'payment-api-scan-'));
  });

  afterAll(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  it('finds a generated key in a .env, a JSON and a YAML file, any prefix, and a legacy key; no near miss', async () => {
    const keys = { env: generateKey(), json: generateKey('acme_live'), yaml: generateKey('st') };
    const misses = nearMisses();
    const thirds = [misses.slice(0, 334), misses.slice(334, 667), misses.slice(667)];
    writeFileSync(join(directory, '.env'), `PAYMENT_APP_ID=demo\nPAYMENT_APP_KEY=${keys.env}\n`);
    writeFileSync(
      join(directory, 'config.json'),
      JSON.stringify({ appId: 'demo', appKey: keys.json }, null, 2),
    );
    writeFileSync(join(directory, 'values.yaml'), `payment:\n  appId: demo\n  appKey: "${keys.yaml}"\n`);
    writeFileSync(join(directory, 'legacy.env'), `APP_KEY=${legacyKey()}\n`);
    writeFileSync(
      join(directory, 'near-misses.env'),
      (thirds[0] ?? []).map((miss, index) => `KEY_${index}=${miss}\n`).join(''),
    );
    writeFileSync(join(directory, 'near-misses.json'), JSON.stringify({ keys: thirds[1] }, null, 2));
    writeFileSync(
      join(directory, 'near-misses.yaml'),
      `keys:\n${(thirds[2] ?? []).map((miss) => `  - ${miss}\n`).join('')}`,
    );

    const found = await scan(directory);

    expect(Object.fromEntries(found)).toEqual({
      '.env': ['secretlint-rule-payment-api-key'],
      'config.json': ['secretlint-rule-payment-api-key'],
      'values.yaml': ['secretlint-rule-payment-api-key'],
      'legacy.env': ['@secretlint/secretlint-rule-pattern'],
      'near-misses.env': [],
      'near-misses.json': [],
      'near-misses.yaml': [],
    });
  });

  it('does not report the documented example key, whose random part is not random', async () => {
    const example = readFileSync(join(PROJECT_ROOT, 'docs', 'security.md'), 'utf8').match(
      /pay_0123456789abcdefABCDEFghijklmnop[0-9A-Za-z]{6}/,
    )?.[0];
    rmSync(directory, { recursive: true, force: true });
    directory = mkdtempSync(join(tmpdir(), 'payment-api-scan-'));
    writeFileSync(join(directory, 'example.md'), `An example: ${example ?? 'missing'}\n`);

    expect(example !== undefined && isWellFormedKey(example)).toBe(true);
    expect(Object.fromEntries(await scan(directory))).toEqual({ 'example.md': [] });
  });
});
