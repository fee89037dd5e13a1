/**
 * The Python snippet docs/keys.md gives operators for finding an app's shard by hand, run as written with the
 * machine's python3, against shardOf for app ids of every shape and every shard count an operator may meet.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { registryNamePrefix, shardSecretName } from '../../../shared/keys/registry';
import { shardOf } from '../../../shared/keys/shard';
import { placementSnippet } from '../../support/placement-doc';

/** Runs the snippet once per line of input (app id, shards, stack; tab-separated), as `python3 shard_of.py ...`. */
const HARNESS = `
import sys
code = compile(open(sys.argv[1], encoding="utf-8").read(), "shard_of.py", "exec")
for line in sys.stdin.read().splitlines():
    sys.argv = ["shard_of.py", *line.split("\\t")]
    exec(code, {"__name__": "__main__"})
`;

function runSnippet(
  snippet: string,
  cases: readonly (readonly [string, number, string])[],
): Promise<string[]> {
  const directory = mkdtempSync(join(tmpdir(), 'shard-of-'));
  const file = join(directory, 'shard_of.py');
  writeFileSync(file, snippet);
  return new Promise<string[]>((resolve, reject) => {
    const child = execFile(
      'python3',
      ['-c', HARNESS, file],
      { maxBuffer: 16 * 1024 * 1024 },
      (error, stdout) => {
        rmSync(directory, { recursive: true, force: true });
        if (error) reject(new Error(`python3 failed: ${error.message}`));
        else resolve(stdout.trim().split('\n'));
      },
    );
    child.stdin?.end(cases.map((entry) => entry.join('\t')).join('\n'));
  });
}

describe('the shard_of.py snippet of docs/keys.md', () => {
  it('finds the shard shardOf finds, and names its secret, for every app id and shard count tried', async () => {
    // Arrange: app ids as the CLI accepts them, and a few beyond (UTF-8 of more than one byte a character).
    const appIds = [
      ...fc.sample(fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/), { numRuns: 300, seed: 16 }),
      'partner-a',
      'démo',
      '商户-7',
    ];
    const counts = [1, 2, 3, 8, 64, 255, 256];
    const cases = appIds.flatMap((appId) =>
      counts.map((shards) => [appId, shards, 'PaymentApi-eu'] as const),
    );

    // Act
    const printed = await runSnippet(placementSnippet(), cases);

    // Assert
    const expected = cases.map(([appId, shards, stack]) => {
      const shard = shardOf(appId, shards);
      return `${shard} ${shard === 0 ? 'KeysSecretArn' : shardSecretName(registryNamePrefix(stack), shard)}`;
    });
    expect(printed).toEqual(expected);
  });
});
