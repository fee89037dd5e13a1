/**
 * The regular expressions scanning/gitleaks.toml and scanning/github-custom-pattern.md publish, run here as
 * JavaScript regular expressions (both are RE2-compatible: no lookaround), against the key format: every key of
 * the default prefix is found, in any surrounding text; no prefix and one character short are not. A wrong checksum
 * IS found: a regular expression cannot compute a CRC32, as both files say.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { isWellFormedKey } from '../../../shared/keys/key-format';
import { generateKey } from '../../../shared/keys/key-material';
import { expectToBe } from '../../support/properties/cheap-expect';

const SCANNING = join(__dirname, '..', '..', '..', 'scanning');
const gitleaks = readFileSync(join(SCANNING, 'gitleaks.toml'), 'utf8');
const github = readFileSync(join(SCANNING, 'github-custom-pattern.md'), 'utf8');

function gitleaksRegex(id: string): RegExp {
  const rule = gitleaks.split('[[rules]]').find((block) => block.includes(`id = "${id}"`)) ?? '';
  const source = /^regex = '''(.*)'''$/m.exec(rule)?.[1];
  if (source === undefined) throw new Error(`no regex for ${id}`);
  return new RegExp(source);
}

/** GitHub's custom pattern: before, the secret format as a group, after. */
function githubRegex(): RegExp {
  const field = (name: string): string => {
    const value = new RegExp(`^\\| ${name} +\\| \`(.*?)\``, 'm').exec(github)?.[1];
    if (value === undefined) throw new Error(`no ${name}`);
    return value.replace(/\\\|/g, '|').replace('\\A', '^').replace('\\z', '$');
  };
  return new RegExp(`(?:${field('Before secret')})(${field('Secret format')})(?:${field('After secret')})`);
}

const CONTEXTS = [
  (key: string) => key,
  (key: string) => `APP_KEY=${key}\n`,
  (key: string) => `{"appKey":"${key}"}`,
  (key: string) => `  appKey: ${key} # partner\n`,
];

describe.each([
  ['gitleaks.toml', gitleaksRegex('payment-api-key')],
  ['github-custom-pattern.md', githubRegex()],
])('the pattern of %s', (_file, pattern) => {
  it('finds every generated key, whole, in any surrounding text', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CONTEXTS), (context) => {
        const key = generateKey();
        expectToBe(pattern.exec(context(key))?.[1], key);
      }),
      { numRuns: 400 },
    );
  });

  it('finds no key without its prefix, and none a character short or long', () => {
    for (let index = 0; index < 300; index++) {
      const key = generateKey();
      for (const miss of [key.slice(4), key.slice(0, -1), key + 'x', `x${key}`]) {
        expectToBe(pattern.test(miss), false);
      }
    }
  });

  it('does find a key with a wrong checksum: a regular expression cannot check a CRC32, as the file says', () => {
    const key = generateKey();
    const wrong = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');

    expect(isWellFormedKey(wrong)).toBe(false);
    expect(pattern.test(wrong)).toBe(true);
  });
});

describe("gitleaks.toml's legacy rule", () => {
  it('finds a legacy key (payk_ and 43 base64url characters) and not a key of the format', () => {
    const legacy = gitleaksRegex('payment-api-legacy-key');

    expect(legacy.exec(`KEY=payk_${'a-_B'.repeat(10)}xyz\n`)?.[1]).toBe(`payk_${'a-_B'.repeat(10)}xyz`);
    expect(legacy.test(generateKey())).toBe(false);
  });
});
