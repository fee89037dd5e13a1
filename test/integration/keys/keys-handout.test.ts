/**
 * Keys are never lost: when the place new keys go fills up (a file under a size limit) or goes away (a pipe whose
 * reader has closed), apply stops before the next shard, and every app whose new key was stored but not handed out
 * whole is named on standard error, with its key id and never its key. The CLI runs as a real process, so the
 * kernel's own limits and errors (EFBIG, EPIPE) are what it meets.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { keyIdOf, parseKeyDocument } from '../../../shared/keys/key-document';
import { KEY_PATTERN_SOURCE } from '../../../shared/keys/key-format';
import { readAllDocuments } from '../../../tools/keys/engine';
import { openRegistry } from '../../../tools/keys/registry-access';
import { decide, runCli } from '../../support/keys-cli';
import { spawnTool, TSX } from '../../support/tool-process';

const APPS = 80;

let directory: string;
let registryFile: string;

beforeEach(async () => {
  directory = mkdtempSync(join(tmpdir(), 'keys-handout-'));
  registryFile = join(directory, 'registry', 'registry.json');
  // Enough shards that a stop always leaves some unwritten: a 2 KiB file holds about 21 key lines, which the first
  // 8 or 9 shards' keys fill, and at most apply's concurrency (4) more are already being written when the stop comes.
  expect((await runCli(['init', '--shards', '32', '--registry-file', registryFile], {})).code).toBe(0);
  const changes = Array.from({ length: APPS }, (_, index) => ({ op: 'add', app: `merchant-${index}` }));
  writeFileSync(join(directory, 'changes.json'), JSON.stringify({ changes }));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

/** Every app the registry holds, with the text of the shard it is in. */
async function storedApps(): Promise<Map<string, string>> {
  const never = () => {
    throw new Error('no AWS here');
  };
  const registry = await openRegistry(
    { kind: 'registry-file', path: registryFile },
    { secretsManager: never, cloudFormation: never, now: Date.now },
  );
  const { snapshots, documents } = await readAllDocuments(registry);
  const apps = new Map<string, string>();
  for (const [index, document] of documents) {
    for (const appId of document.keys()) apps.set(appId, snapshots.get(index)?.text ?? '');
  }
  return apps;
}

/** Apps named on standard error as stored but not handed out, with the key id named. */
function reported(stderr: string): Map<string, string> {
  const named = [
    ...stderr.matchAll(/^error: app (\S+): its new key ([0-9a-f]{12}) was stored but not handed out/gm),
  ];
  return new Map(named.map(([, appId = '', keyId = '']) => [appId, keyId]));
}

/** The key lines handed out whole: app id → key. */
function handedOut(text: string): Map<string, string> {
  const whole = text.split('\n').slice(0, -1);
  return new Map(
    whole.map((line) => {
      const { appId, key } = JSON.parse(line) as { appId: string; key: string };
      return [appId, key];
    }),
  );
}

async function expectNoKeyLost(keysText: string, stderr: string): Promise<void> {
  const stored = await storedApps();
  const out = handedOut(keysText);
  const named = reported(stderr);
  expect(stored.size).toBeGreaterThan(0);
  for (const [appId, text] of stored) {
    const key = out.get(appId);
    if (key !== undefined) expect(decide(text, appId, key).ok).toBe(true);
    else expect(named.has(appId)).toBe(true);
  }
  for (const appId of [...out.keys(), ...named.keys()]) expect(stored.has(appId)).toBe(true);
  expect(stderr).not.toMatch(new RegExp(KEY_PATTERN_SOURCE));
  for (const [appId, keyId] of named) {
    const keys = parseKeyDocument(stored.get(appId) ?? '{}').get(appId)?.keys ?? [];
    expect(keys.map((key) => keyIdOf(key.stored))).toEqual([keyId]);
    expect(stderr).toContain(`"keys rotate ${appId}"`);
  }
}

describe('apply --keys-out when the keys cannot all be handed out', () => {
  it('a file under a 2 KiB size limit: stops, names every stored app whose key did not go out whole, exit 1', async () => {
    const keysOut = join(directory, 'new.keys.jsonl');
    const script = `ulimit -f 2; exec "$TSX" bin/keys.ts apply "$DIR/changes.json" --keys-out "${keysOut}" --registry-file "${registryFile}"`;

    const result = await spawnTool('bash', ['-c', script], { TSX, DIR: directory });

    expect(result.code).toBe(1);
    expect(reported(result.stderr).size).toBeGreaterThan(0);
    expect(result.stdout).toMatch(
      /^shard \d+ \(file [^)]*\): not written, none of its \d+ changes?: the run stopped$/m,
    );
    await expectNoKeyLost(readFileSync(keysOut, 'utf8'), result.stderr);
    const apps = await storedApps();
    expect(apps.size).toBeLessThan(APPS);
  });

  it('standard output into a pipe whose reader has gone: names every stored app, exit 1, no crash', async () => {
    const script =
      `"$TSX" bin/keys.ts apply "$DIR/changes.json" --keys-out - --registry-file "${registryFile}" 2>"$DIR/err" ` +
      `| (exec 0<&-; true); exit "\${PIPESTATUS[0]}"`;

    const result = await spawnTool('bash', ['-c', script], { TSX, DIR: directory });
    const stderr = readFileSync(join(directory, 'err'), 'utf8');

    expect(result.code).toBe(1);
    expect(stderr).not.toMatch(/EPIPE.*\n\s+at /);
    expect(reported(stderr).size).toBeGreaterThan(0);
    await expectNoKeyLost('', stderr);
  });
});
