import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isWellFormedKey, KEY_PATTERN } from '../../../shared/keys/key-format';

const SECURITY = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'security.md'), 'utf8');

describe("docs/security.md's key format", () => {
  const section = SECURITY.slice(SECURITY.indexOf('## The key format'));

  it('publishes the one regular expression shared/keys/key-format.ts exports', () => {
    expect(/```text\n(.*)\n```/.exec(section)?.[1]).toBe(KEY_PATTERN.source);
  });

  it('gives an example key that is well formed, and that the published expression matches', () => {
    const example = /`(pay_[0-9A-Za-z]{38})`/.exec(section)?.[1] ?? '';

    expect(isWellFormedKey(example)).toBe(true);
    expect(example).toMatch(KEY_PATTERN);
  });
});
