/**
 * The key file edited by separate processes, which only real processes can show; the in-process cases are in
 * test/unit/tools/keys/file-store.test.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKeyring } from '../../../shared/keys/keyring';
import { DEMO_KEY } from '../../support/keys';
import { decide, spawnCli } from '../../support/keys-cli';

let directory: string;
let file: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-file-store-'));
  file = join(directory, 'keys.json');
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

describe('concurrent writers through the key file', () => {
  it('keeps both keys when two processes rotate at once', async () => {
    writeFileSync(file, JSON.stringify({ demo: [DEMO_KEY] }));

    const results = await Promise.all([
      spawnCli(['rotate', 'demo', '--json', '--file', file], {}),
      spawnCli(['rotate', 'demo', '--json', '--file', file], {}),
    ]);

    expect(results.map((result) => [result.code, result.stderr.replace(/^note: .*\n/, '')])).toEqual([
      [0, ''],
      [0, ''],
    ]);
    const stored = readFileSync(file, 'utf8');
    const { keyring } = parseKeyring(stored);
    for (const result of results) {
      const { key } = JSON.parse(result.stdout) as { key: string };
      expect(decide(stored, 'demo', key).ok).toBe(true);
    }
    expect(keyring.get('demo')?.keys).toHaveLength(3);
    expect(readdirSync(directory)).toEqual(['keys.json']);
  });
});
