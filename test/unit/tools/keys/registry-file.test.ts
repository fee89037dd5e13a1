import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseKeyDocument } from '../../../../shared/keys/key-document';
import { parseRegistryManifest, shardsToSearch } from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';
import { decide, GENERATED_KEY_PATTERN, runCli } from '../../../support/keys-cli';

let directory: string;
let registryFile: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-registry-file-'));
  registryFile = join(directory, 'registry', 'registry.json');
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const keys = (argv: readonly string[], extra: Parameters<typeof runCli>[2] = {}) =>
  runCli([...argv, '--registry-file', registryFile], {}, extra);
/** A file of the registry's directory. */
const inRegistry = (file: string): string => join(directory, 'registry', file);
const shardText = (index: number): string => readFileSync(inRegistry(`keys-${index}.json`), 'utf8');
const manifest = () => {
  const reading = parseRegistryManifest(readFileSync(registryFile, 'utf8'));
  if (!reading.ok) throw new Error(reading.problem);
  return reading.manifest;
};
const apps = (count: number) =>
  Array.from({ length: count }, (_, i) => `partner-${String(i).padStart(3, '0')}`);

function changes(list: readonly object[]): string {
  const file = join(directory, `changes-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ changes: list }));
  return file;
}

/** apply: adds apps(count), their keys to k.jsonl. */
const addApps = (count: number) =>
  keys([
    'apply',
    changes(apps(count).map((app) => ({ op: 'add', app }))),
    '--keys-out',
    join(directory, 'k.jsonl'),
  ]);

describe('a local registry', () => {
  it('init creates the manifest and one empty shard file each, 0600 in a 0700 directory', async () => {
    const created = await keys(['init', '--shards', '4']);

    expect(created.code).toBe(0);
    expect(readdirSync(inRegistry('')).sort()).toEqual([
      'keys-0.json',
      'keys-1.json',
      'keys-2.json',
      'keys-3.json',
      'registry.json',
    ]);
    for (const file of readdirSync(inRegistry('')))
      expect(statSync(inRegistry(file)).mode & 0o777).toBe(0o600);
    expect(statSync(inRegistry('')).mode & 0o777).toBe(0o700);
    expect(manifest()).toEqual({
      shards: 4,
      shardIds: ['keys-0.json', 'keys-1.json', 'keys-2.json', 'keys-3.json'],
      keyCacheTtlSeconds: 60,
    });
  });

  it("add-app puts each app in its home shard's file; where says which", async () => {
    await keys(['init', '--shards', '4']);

    const added = await keys(['add-app', 'shop', '--json']);
    const where = await keys(['where', 'shop']);

    const { key } = JSON.parse(added.stdout) as { key: string };
    expect(key).toMatch(GENERATED_KEY_PATTERN);
    const home = shardOf('shop', 4);
    expect(decide(shardText(home), 'shop', key).ok).toBe(true);
    expect([0, 1, 2, 3].filter((i) => parseKeyDocument(shardText(i)).has('shop'))).toEqual([home]);
    expect(where.stdout).toBe(
      `app shop: home shard ${home} of 4 (${inRegistry(`keys-${home}.json`)}); it is there\n`,
    );
  });

  it('apply --keys-out - sends every key to standard output, one JSON line each, stored in its home shard', async () => {
    await keys(['init', '--shards', '3']);

    const result = await keys([
      'apply',
      changes(apps(30).map((app) => ({ op: 'add', app }))),
      '--keys-out',
      '-',
    ]);

    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { appId: string; key: string });
    expect(lines).toHaveLength(30);
    for (const { appId, key } of lines)
      expect(decide(shardText(shardOf(appId, 3)), appId, key).ok).toBe(true);
  });

  it('apply refuses an add of an app that exists, and a key file that exists, writing nothing', async () => {
    await keys(['init', '--shards', '2']);
    await keys(['add-app', 'shop']);
    const before = [shardText(0), shardText(1)];
    writeFileSync(join(directory, 'taken.jsonl'), 'mine');

    const exists = await keys([
      'apply',
      changes([
        { op: 'add', app: 'shop' },
        { op: 'add', app: 'new' },
      ]),
      '--keys-out',
      join(directory, 'k.jsonl'),
    ]);
    const taken = await keys([
      'apply',
      changes([{ op: 'add', app: 'other' }]),
      '--keys-out',
      join(directory, 'taken.jsonl'),
    ]);

    expect(exists.code).toBe(1);
    expect(exists.stderr).toMatch(
      /line \d+: change #1 \(add\): app already exists: shop\n.*1 change does not fit the registry as it is; nothing was written\n$/s,
    );
    expect(taken.stderr).toBe(
      `error: --keys-out ${join(directory, 'taken.jsonl')} already exists; the keys file is never overwritten: name a new file (nothing was written)\n`,
    );
    expect(readFileSync(join(directory, 'taken.jsonl'), 'utf8')).toBe('mine');
    expect([shardText(0), shardText(1)]).toEqual(before);
    expect(readdirSync(directory).filter((file) => file.endsWith('.jsonl'))).toEqual(['taken.jsonl']);
  });

  it('reshard --shards grows it: new shard files, every app moved home, then the manifest forgets the old count', async () => {
    await keys(['init', '--shards', '2']);
    const added = await addApps(40);
    const waits: number[] = [];
    const misplacedDuring: string[] = [];

    const result = await keys(['reshard', '--shards', '5'], {
      sleep: (ms) => {
        waits.push(ms);
        // While the reshard settles, readers (new home first, then the old) still find every app.
        const layout = manifest();
        for (const app of apps(40)) {
          const found = shardsToSearch(layout, app).some((i) => parseKeyDocument(shardText(i)).has(app));
          if (!found) misplacedDuring.push(app);
        }
        return Promise.resolve();
      },
    });

    expect(added.code).toBe(0);
    expect(result.code).toBe(0);
    expect(waits).toEqual([90_000]);
    expect(misplacedDuring).toEqual([]);
    for (const app of apps(40)) {
      expect([0, 1, 2, 3, 4].filter((i) => parseKeyDocument(shardText(i)).has(app))).toEqual([
        shardOf(app, 5),
      ]);
    }
    expect(manifest()).toEqual({
      shards: 5,
      shardIds: [0, 1, 2, 3, 4].map((i) => `keys-${i}.json`),
      keyCacheTtlSeconds: 60,
    });
    expect(result.stdout).toContain('nothing is left to move\n');
    expect(result.stdout).not.toContain('deploy');
  });

  it('reshard --shards refuses another count while a reshard is under way, and finishes the one under way', async () => {
    await keys(['init', '--shards', '2']);
    await addApps(10);
    const interrupted = await keys(['reshard', '--shards', '5'], {
      sleep: () => Promise.reject(new Error('interrupted while it settled')),
    });
    const underWay = manifest();
    const shards = [0, 1, 2, 3, 4].map(shardText);

    const refused = await keys(['reshard', '--shards', '3', '--settle', '0s']);

    expect(interrupted.code).not.toBe(0);
    expect(underWay).toMatchObject({ shards: 5, previousShards: 2 });
    expect(refused).toMatchObject({
      code: 1,
      stdout: '',
      stderr: `error: a reshard from 2 to 5 shards is under way in registry file ${registryFile}: finish it first (reshard without --shards)\n`,
    });
    expect(manifest()).toEqual(underWay);
    expect([0, 1, 2, 3, 4].map(shardText)).toEqual(shards);

    const finished = await keys(['reshard', '--shards', '5', '--settle', '0s']);

    expect(finished.code).toBe(0);
    expect(manifest()).toEqual({
      shards: 5,
      shardIds: [0, 1, 2, 3, 4].map((i) => `keys-${i}.json`),
      keyCacheTtlSeconds: 60,
    });
  });

  it('reshard --shards shrinks it too, removing the files it emptied, and --dry-run says what it will move', async () => {
    await keys(['init', '--shards', '4']);
    await addApps(20);
    const before = [0, 1, 2, 3].map(shardText);

    const dryRun = await keys(['reshard', '--shards', '1', '--dry-run']);
    const unchanged = [0, 1, 2, 3].map(shardText);
    const shrunk = await keys(['reshard', '--shards', '1', '--settle', '0s']);

    const planned =
      /^dry run: (\d+) apps to copy home, (\d+) old copies to remove; nothing was written$/m.exec(
        dryRun.stdout,
      );
    const moved = /^moved (\d+) apps home; removed (\d+) old copies; \d+ writes$/m.exec(shrunk.stdout);
    expect(planned?.slice(1)).toEqual(moved?.slice(1));
    expect(Number(moved?.[1])).toBeGreaterThan(0);
    expect(unchanged).toEqual(before);
    expect(before.some((text) => text !== '{}')).toBe(true);
    expect(shrunk.code).toBe(0);
    expect([...parseKeyDocument(shardText(0)).keys()].sort()).toEqual(apps(20));
    expect([1, 2, 3].map((index) => existsSync(inRegistry(`keys-${index}.json`)))).toEqual([
      false,
      false,
      false,
    ]);
    expect(shrunk.stdout).toMatch(/^removed 3 shard files the shrink emptied$/m);
    expect(manifest()).toEqual({ shards: 1, shardIds: ['keys-0.json'], keyCacheTtlSeconds: 60 });
  });
});
