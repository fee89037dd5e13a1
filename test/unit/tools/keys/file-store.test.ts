import {
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ABSENT_VERSION, FileStore } from '../../../../tools/keys/file-store';
import { KeyStoreError } from '../../../../tools/keys/key-store';
import { parseKeyring } from '../../../../shared/keys/keyring';
import { DEMO_KEY } from '../../../support/keys';
import { decide, runCli } from '../../../support/keys-cli';

/** `stat` passes through unless a test plays another writer at the moment the store inspects the lock. */
jest.mock('node:fs/promises', () => {
  const actual = jest.requireActual<typeof import('node:fs/promises')>('node:fs/promises');
  return { ...actual, stat: jest.fn(actual.stat) };
});
const { stat: realStat } = jest.requireActual<typeof import('node:fs/promises')>('node:fs/promises');

let directory: string;
let file: string;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-file-store-'));
  file = join(directory, 'keys.json');
  jest.mocked(stat).mockImplementation(realStat);
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

function makeStale(path: string): void {
  const longAgo = new Date(Date.now() - 60_000);
  utimesSync(path, longAgo, longAgo);
}

describe('FileStore', () => {
  it('reads a missing file as absent', async () => {
    expect(await new FileStore(file).read()).toEqual({ text: undefined, version: ABSENT_VERSION });
  });

  it('replaces the file when it is unchanged since the read, through a 0600 temporary file', async () => {
    writeFileSync(file, '{}\n', { mode: 0o644 });
    const store = new FileStore(file);
    const snapshot = await store.read();

    const outcome = await store.replace(snapshot.version, '{"a":1}\n');

    expect(outcome).toEqual({ status: 'replaced', warnings: [] });
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(directory)).toEqual(['keys.json']);
  });

  it('reports a conflict when a file expected to be absent was created meanwhile', async () => {
    writeFileSync(file, '{"other":1}\n');

    const outcome = await new FileStore(file).replace(ABSENT_VERSION, '{"mine":1}\n');

    expect(outcome.status).toBe('conflict');
    expect(readFileSync(file, 'utf8')).toBe('{"other":1}\n');
  });

  it('waits for a fresh lock and gives up with a message naming the lock file', async () => {
    writeFileSync(file, '{}\n');
    writeFileSync(`${file}.lock`, 'another writer');
    // A short wait: it is tried again a few times (10, 20, 40 ms apart) before it gives up.
    const store = new FileStore(file, { lockWaitMs: 50 });
    const snapshot = await store.read();

    const replace = store.replace(snapshot.version, '{"mine":1}\n');

    await expect(replace).rejects.toThrow(
      new KeyStoreError(
        `key file ${file} is locked by another writer (${file}.lock); if no other keys command is running, delete the lock file`,
      ),
    );
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
  });

  it('breaks a lock older than the stale bound and releases its own lock afterwards', async () => {
    writeFileSync(file, '{}\n');
    writeFileSync(`${file}.lock`, 'a writer that died');
    makeStale(`${file}.lock`);
    const store = new FileStore(file, { staleLockMs: 30_000, lockWaitMs: 200 });
    const snapshot = await store.read();

    const outcome = await store.replace(snapshot.version, '{"mine":1}\n');

    expect(outcome.status).toBe('replaced');
    expect(existsSync(`${file}.lock`)).toBe(false);
  });
});

describe('breaking a stale lock', () => {
  it('leaves alone the fresh lock another writer took after this one saw the stale lock', async () => {
    writeFileSync(file, '{}\n');
    const lockPath = `${file}.lock`;
    writeFileSync(lockPath, 'a writer that died');
    makeStale(lockPath);
    jest.mocked(stat).mockImplementationOnce(async (path) => {
      const stale = await realStat(path);
      // Between this writer's look at the lock and its next step, another writer breaks it and locks afresh.
      rmSync(lockPath);
      writeFileSync(lockPath, 'another writer');
      return stale;
    });
    const store = new FileStore(file, { staleLockMs: 30_000, lockWaitMs: 50 });
    const snapshot = await store.read();

    const replace = store.replace(snapshot.version, '{"mine":1}\n');

    await expect(replace).rejects.toThrow(`key file ${file} is locked by another writer`);
    expect(readFileSync(lockPath, 'utf8')).toBe('another writer');
    expect(readFileSync(file, 'utf8')).toBe('{}\n');
    expect(readdirSync(directory).sort()).toEqual(['keys.json', 'keys.json.lock']);
  });

  it('with six writers racing to break it, every key lands (six new ones, seven in all) and no lock file is left', async () => {
    writeFileSync(file, JSON.stringify({ demo: [DEMO_KEY] }));
    writeFileSync(`${file}.lock`, 'a writer that died');
    makeStale(`${file}.lock`);

    const results = await Promise.all(
      Array.from({ length: 6 }, () => runCli(['rotate', 'demo', '--json', '--file', file], {})),
    );

    expect(results.map((result) => result.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const stored = readFileSync(file, 'utf8');
    const reported = results.map((result) => (JSON.parse(result.stdout) as { key: string }).key);
    expect(new Set(reported).size).toBe(6);
    for (const key of [DEMO_KEY, ...reported]) {
      expect(decide(stored, 'demo', key).ok).toBe(true);
    }
    expect(parseKeyring(stored).keyring.get('demo')?.keys).toHaveLength(7);
    expect(readdirSync(directory)).toEqual(['keys.json']);
  });
});
