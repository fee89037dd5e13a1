import { KeyCache, type SecretSource } from '../../../../lambda/payment/key-cache';
import { captureLogs } from '../../../support/capture-logger';

/** A source whose text the test changes, answering each read when the test says. */
function controlledSource(initial: string) {
  let text = initial;
  const pending: (() => void)[] = [];
  let reads = 0;
  const source: SecretSource = {
    description: 'test keys',
    fetchSecretString: () => {
      reads++;
      const answer = text;
      return new Promise((resolve) =>
        pending.push(() => {
          resolve(answer);
        }),
      );
    },
  };
  return {
    source,
    set: (next: string) => (text = next),
    answerAll: () => {
      for (const answer of pending.splice(0)) answer();
    },
    reads: () => reads,
  };
}

const OLD = JSON.stringify({ demo: ['old-key-0123456789abcdef'] });
const NEW = JSON.stringify({ demo: ['old-key-0123456789abcdef'], shop: ['new-key-0123456789abcdef'] });

async function loadedCache(source: SecretSource, answer: () => void): Promise<KeyCache> {
  const cache = new KeyCache({ source, logger: captureLogs().logger, ttlMs: 60_000, maxStaleMs: 900_000 });
  const first = cache.getKeys();
  answer();
  await first;
  return cache;
}

describe('KeyCache.reload (the local server’s key file changed)', () => {
  it('makes the next request wait for the new keys, however fresh the old ones are', async () => {
    // Arrange
    const file = controlledSource(OLD);
    const cache = await loadedCache(file.source, file.answerAll);
    file.set(NEW);

    // Act
    cache.reload();
    const keys = cache.getKeys();
    let settled = false;
    void keys.then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    const settledBeforeTheRead = settled;
    file.answerAll();

    // Assert
    expect(settledBeforeTheRead).toBe(false);
    expect([...(await keys).keyring.keys()]).toEqual(['demo', 'shop']);
    expect(file.reads()).toBe(2);
  });

  it('waits for the newest of several reloads', async () => {
    const file = controlledSource(OLD);
    const cache = await loadedCache(file.source, file.answerAll);

    cache.reload();
    const keys = cache.getKeys();
    file.set(NEW);
    cache.reload();
    file.answerAll();

    expect([...(await keys).keyring.keys()]).toEqual(['demo', 'shop']);
  });

  it('keeps serving the keys it had when the changed file cannot be read', async () => {
    const file = controlledSource(OLD);
    const cache = await loadedCache(file.source, file.answerAll);
    file.set('not JSON');

    cache.reload();
    const keys = cache.getKeys();
    file.answerAll();

    expect(await keys).toEqual({ keyring: expect.any(Map) as unknown, stale: false });
    expect([...(await keys).keyring.keys()]).toEqual(['demo']);
  });
});
