import { KeysUnavailableError, type SecretSource } from '../../../../lambda/payment/key-cache';
import type { RegistryLayout } from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';
import { RegistryKeys, sameLayout } from '../../../../tools/local-server/registry-keys';
import { captureLogs, type CapturedLogs } from '../../../support/capture-logger';
import { settleTiming } from '../../../support/fake-time';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';
import { appMovingBetween, appOnShard } from '../../../support/shards';

const TTL_MS = 60_000;

const layoutOf = (shards: number, previousShards?: number): RegistryLayout => ({
  shards,
  ...(previousShards === undefined ? {} : { previousShards }),
  shardIds: Array.from({ length: Math.max(shards, previousShards ?? 0) }, (_, index) => `keys-${index}.json`),
});

/** Shard files in memory, by id, and the manifest, each answering after the delay the test sets. */
class FakeFiles {
  readonly texts = new Map<string, string>();
  readonly fetched: string[] = [];
  manifest: RegistryLayout | Error;
  manifestDelayMs = 0;
  manifestReads = 0;

  constructor(layout: RegistryLayout) {
    this.manifest = layout;
    for (const id of layout.shardIds) this.texts.set(id, '{}');
  }

  put(id: string, apps: Readonly<Record<string, string>>): void {
    this.texts.set(id, JSON.stringify(apps));
  }

  source = (_index: number, id: string): SecretSource => ({
    description: id,
    fetchSecretString: () => {
      this.fetched.push(id);
      return Promise.resolve(this.texts.get(id) ?? '{}');
    },
  });

  readLayout = (): Promise<RegistryLayout> => {
    this.manifestReads++;
    const answer = this.manifest;
    return new Promise((resolve, reject) => {
      setTimeout(() => {
        if (answer instanceof Error) reject(answer);
        else resolve(answer);
      }, this.manifestDelayMs);
    });
  };
}

function registryKeys(files: FakeFiles, layout: RegistryLayout, logs: CapturedLogs = captureLogs()) {
  const changes: RegistryLayout[] = [];
  const keys = new RegistryKeys({
    layout,
    layoutReadAt: Date.now(),
    readLayout: files.readLayout,
    description: '/p/registry.json',
    sourceFor: files.source,
    logger: logs.logger,
    ttlMs: TTL_MS,
    maxStaleMs: 15 * 60_000,
    onLayoutChange: (next) => changes.push(next),
  });
  return { keys, changes, logs };
}

const holds = async (keys: RegistryKeys, appId: string): Promise<boolean> =>
  (await keys.getKeys(appId)).keyring.has(appId);

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2026-11-21T12:00:00Z') });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('RegistryKeys', () => {
  const four = layoutOf(4);
  const growing = layoutOf(8, 4);
  /** Moves from shard 1 of 4 to shard 5 of 8. */
  const moving = appMovingBetween({ shards: 8, home: 5 }, { previousShards: 4, previousHome: 1 }, 'moving');

  it('serves each app from its shard, reading the manifest again (as the shard) only once a TTL has passed', async () => {
    // Arrange
    const files = new FakeFiles(four);
    const app = appOnShard(2, 4, 'partner');
    files.put('keys-2.json', { [app]: PARTNER_KEY });
    const { keys } = registryKeys(files, four);

    // Act
    const servedAtOnce = await holds(keys, app);
    await jest.advanceTimersByTimeAsync(TTL_MS - 1);
    await holds(keys, app);
    const readsWithinTtl = files.manifestReads;
    await jest.advanceTimersByTimeAsync(1);
    await holds(keys, app);

    // Assert
    expect(servedAtOnce).toBe(true);
    expect(files.fetched).toEqual(['keys-2.json', 'keys-2.json']);
    expect(readsWithinTtl).toBe(0);
    expect(files.manifestReads).toBe(1);
  });

  /** One app on shard 0 of four, a TTL later, the manifest now answering in 5 s. */
  async function pastTtlWithSlowManifest() {
    const files = new FakeFiles(four);
    const app = appOnShard(0, 4, 'partner');
    files.put('keys-0.json', { [app]: PARTNER_KEY });
    const { keys } = registryKeys(files, four);
    await jest.advanceTimersByTimeAsync(TTL_MS);
    files.manifestDelayMs = 5_000;
    return { files, app, keys };
  }

  it('does not make a request wait for the TTL re-read of the manifest', async () => {
    const { files, app, keys } = await pastTtlWithSlowManifest();

    const served = keys.getKeys(app);

    expect(await settleTiming(served)).toBe(0);
    expect((await served).keyring.has(app)).toBe(true);
    expect(files.manifestReads).toBe(1);
  });

  it('after reloadLayout (the registry file changed), requests wait for the new layout and are served by it', async () => {
    // Arrange: reshard --shards 8 wrote the manifest and copied the app to its new home.
    const files = new FakeFiles(four);
    files.put('keys-1.json', { [moving]: DEMO_KEY });
    const { keys, changes, logs } = registryKeys(files, four);
    await holds(keys, moving);
    files.manifest = growing;
    files.manifestDelayMs = 50;
    files.put('keys-5.json', { [moving]: DEMO_KEY });

    // Act
    keys.reloadLayout();
    const request = keys.getKeys(moving);
    const waitedMs = await settleTiming(request);

    // Assert
    expect(waitedMs).toBe(50);
    expect((await request).keyring.has(moving)).toBe(true);
    expect(files.fetched.at(-1)).toBe('keys-5.json');
    expect(keys.layout).toEqual(growing);
    expect(changes).toEqual([growing]);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({ message: 'key registry changed', source: '/p/registry.json' }),
    );
  });

  it('never refuses a moved app on a layout older than the TTL: it reads the manifest, then looks where it says', async () => {
    // Arrange: the server holds the layout of 4 shards; unseen by it (no watch), the manifest grows to 8, the app
    // is copied to its new home, and a TTL and more later its old copy is removed.
    const files = new FakeFiles(four);
    files.put('keys-1.json', { [moving]: DEMO_KEY });
    const { keys } = registryKeys(files, four);
    const before = await holds(keys, moving);
    files.manifest = growing;
    files.put('keys-5.json', { [moving]: DEMO_KEY });
    await jest.advanceTimersByTimeAsync(TTL_MS + 30_000);
    files.put('keys-1.json', {});
    files.manifestDelayMs = 2_000;

    // Act: the old home, read again, no longer holds it.
    const request = keys.getKeys(moving);
    const waitedMs = await settleTiming(request);

    // Assert
    expect(before).toBe(true);
    expect(waitedMs).toBe(2_000);
    expect((await request).keyring.has(moving)).toBe(true);
    expect(files.manifestReads).toBe(1);
  });

  it('refuses an unknown app at once on a layout read less than a TTL ago', async () => {
    const files = new FakeFiles(four);
    const { keys } = registryKeys(files, four);

    const request = keys.getKeys('nobody');

    expect(await settleTiming(request)).toBe(0);
    expect((await request).keyring.has('nobody')).toBe(false);
    expect(files.manifestReads).toBe(0);
  });

  it('answers unavailable (503), not a refusal, when an app is found nowhere and the stale manifest cannot be read', async () => {
    const files = new FakeFiles(four);
    const { keys, logs } = registryKeys(files, four);
    await jest.advanceTimersByTimeAsync(TTL_MS);
    files.manifest = new Error('AccessDeniedException: not allowed');

    const request = keys.getKeys('nobody');
    await settleTiming(request);

    await expect(request).rejects.toThrow(
      new KeysUnavailableError(
        'the key registry manifest is older than the cache TTL and cannot be read again',
      ),
    );
    expect(files.manifestReads).toBe(2);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'key registry read failed',
        source: '/p/registry.json',
        error: 'Error: AccessDeniedException: not allowed',
      }),
    );
  });

  it('keeps the newer layout when an older read of the manifest finishes last', async () => {
    // Arrange: a TTL re-read starts (slow) and finds the old manifest; then the file changes and is read at once.
    const { files, app, keys } = await pastTtlWithSlowManifest();
    await holds(keys, app);
    files.manifest = growing;
    files.manifestDelayMs = 10;

    // Act
    keys.reloadLayout();
    await jest.advanceTimersByTimeAsync(10);
    const afterReload = keys.layout;
    await jest.advanceTimersByTimeAsync(5_000);

    // Assert
    expect(afterReload).toEqual(growing);
    expect(keys.layout).toEqual(growing);
  });

  it('reads a shard again when its file changes, and only that shard', async () => {
    const files = new FakeFiles(four);
    const app = appOnShard(3, 4, 'partner');
    const added = appOnShard(3, 4, 'added');
    files.put('keys-3.json', { [app]: PARTNER_KEY });
    const { keys } = registryKeys(files, four);
    await holds(keys, app);
    await holds(keys, appOnShard(0, 4, 'other'));
    files.put('keys-3.json', { [app]: PARTNER_KEY, [added]: DEMO_KEY });

    keys.reloadShard('keys-3.json');
    keys.reloadShard('elsewhere.json');

    expect(await holds(keys, added)).toBe(true);
    expect(files.fetched).toEqual(['keys-3.json', 'keys-0.json', 'keys-3.json']);
    expect(shardOf(added, 4)).toBe(3);
  });
});

describe('sameLayout', () => {
  it('tells layouts apart by their counts and every shard id', () => {
    expect(sameLayout(layoutOf(4), layoutOf(4))).toBe(true);
    expect(sameLayout(layoutOf(8, 4), layoutOf(8))).toBe(false);
    expect(sameLayout(layoutOf(4), { ...layoutOf(4), shardIds: ['a', 'b', 'c', 'd'] })).toBe(false);
  });
});
