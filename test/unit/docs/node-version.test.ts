import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROJECT_ROOT } from '../../support/markdown';

/** `^20.19.0 || >=22.12.0`: each alternative's kind and version. */
function alternatives(range: string): { kind: '^' | '>='; version: number[] }[] {
  return range.split('||').map((part) => {
    const match = /^\s*(\^|>=)(\d+)\.(\d+)\.(\d+)\s*$/.exec(part);
    if (match === null) throw new Error(`engines.node has a part this test does not read: "${part}"`);
    return { kind: match[1] as '^' | '>=', version: match.slice(2).map(Number) };
  });
}

function compare(a: readonly number[], b: readonly number[]): number {
  for (let index = 0; index < 3; index++) {
    const difference = (a[index] ?? 0) - (b[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

function satisfies(version: readonly number[], range: string): boolean {
  return alternatives(range).some(
    ({ kind, version: minimum }) =>
      compare(version, minimum) >= 0 && (kind === '>=' || version[0] === minimum[0]),
  );
}

const packageJson = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
};
const range = packageJson.engines.node;
/** `20.19`, `22.12`: how the README and the development page write each minimum. */
const minimums = alternatives(range).map(({ version }) => `${version[0] ?? ''}.${version[1] ?? ''}`);

describe('one Node version', () => {
  it('README’s prerequisites name the minimums of package.json’s engines, and no other Node version for development', () => {
    const readme = readFileSync(join(PROJECT_ROOT, 'README.md'), 'utf8');
    const prerequisites = readme.slice(
      readme.indexOf('## Prerequisites'),
      readme.indexOf('## The two commands'),
    );
    const line = prerequisites.split('\n- ').find((item) => item.startsWith('Node.js')) ?? '';

    expect(minimums).toEqual(['20.19', '22.12']);
    for (const minimum of minimums) expect(line).toContain(`${minimum} or newer`);
    expect(line.match(/\d+\.\d+ or newer/g)).toEqual(minimums.map((minimum) => `${minimum} or newer`));
  });

  it('the development page states the same range', () => {
    const page = readFileSync(join(PROJECT_ROOT, 'docs', 'development.md'), 'utf8');

    expect(page).toContain(`\`${range}\``);
  });

  it('the Node running these tests (CI’s, a developer’s) is one package.json allows', () => {
    const running = process.versions.node.split('.').map(Number);

    expect([process.versions.node, satisfies(running, range)]).toEqual([process.versions.node, true]);
  });

  it('reads the range as npm does at its edges', () => {
    expect([
      satisfies([20, 19, 0], range),
      satisfies([20, 18, 9], range),
      satisfies([21, 7, 0], range),
      satisfies([22, 11, 0], range),
      satisfies([22, 12, 0], range),
      satisfies([24, 0, 0], range),
    ]).toEqual([true, false, false, false, true, true]);
  });
});
