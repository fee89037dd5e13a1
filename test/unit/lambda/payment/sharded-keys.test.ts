import fc from 'fast-check';
import {
  KeysUnavailableError,
  type CurrentKeys,
  type SecretSource,
} from '../../../../lambda/payment/key-cache';
import { ShardedKeys, type ShardedKeysOptions } from '../../../../lambda/payment/sharded-keys';
import { matchDigestOf } from '../../../../shared/keys/key-material';
import { shardOf } from '../../../../shared/keys/shard';
import { singleShardLayout, type RegistryLayout } from '../../../../shared/keys/registry';
import { isLogField } from '../../../../shared/log-fields';
import { captureLogs, type CapturedLogs } from '../../../support/capture-logger';
import { settleTiming } from '../../../support/fake-time';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';
import { appMovingBetween, appOnShard, movingApp } from '../../../support/shards';

const TTL_MS = 60_000;
const MAX_STALE_MS = 15 * 60_000;
const REFRESH_WAIT_MS = 250;
/** KEY_FETCH_BUDGET_MS, as the Lambda's sources state it. */
const DEADLINE_MS = 1_500;

/** How a fake shard answers its fetches from now on; `silent`: nothing, until the client's deadline ends the call. */
type Answer =
  | { readonly kind: 'text'; readonly afterMs: number }
  | { readonly kind: 'fail'; readonly afterMs: number }
  | { readonly kind: 'silent' }
  /** Secrets Manager's answer for a secret that does not exist (a deleted shard). */
  | { readonly kind: 'missing' };

class ResourceNotFoundException extends Error {
  override readonly name = 'ResourceNotFoundException';
}

/** A shard secret in memory: its text (a function of the time Secrets Manager reads it), how it answers, its fetches. */
class FakeShard {
  answer: Answer = { kind: 'text', afterMs: 0 };
  readonly fetchedAt: number[] = [];

  constructor(public textAt: (readAt: number) => string) {}

  set text(text: string) {
    this.textAt = () => text;
  }

  source(id: string): SecretSource {
    return {
      description: id,
      deadlineMs: DEADLINE_MS,
      fetchSecretString: () => {
        const startedAt = Date.now();
        this.fetchedAt.push(startedAt);
        const answer = this.answer;
        if (answer.kind === 'missing') {
          return Promise.reject(
            new ResourceNotFoundException("Secrets Manager can't find the specified secret."),
          );
        }
        const after = answer.kind === 'silent' ? { kind: 'fail', afterMs: DEADLINE_MS } : answer;
        // An instant answer needs no timer: tests that do not move the fake clock still get it.
        if (after.afterMs === 0) {
          return after.kind === 'fail'
            ? Promise.reject(new Error('ThrottlingException: Rate exceeded'))
            : Promise.resolve(this.textAt(startedAt));
        }
        return new Promise<string>((resolve, reject) => {
          setTimeout(() => {
            if (after.kind === 'fail') reject(new Error('ThrottlingException: Rate exceeded'));
            else resolve(this.textAt(startedAt));
          }, after.afterMs);
        });
      },
    };
  }
}

function layoutOf(shards: number, previousShards?: number): RegistryLayout {
  const slots = Math.max(shards, previousShards ?? 0);
  return {
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
    shardIds: Array.from({ length: slots }, (_, index) => `payment-api/Test/keys/shard-${index}`),
  };
}

interface Registry {
  readonly keys: ShardedKeys;
  readonly shards: readonly FakeShard[];
  readonly logs: CapturedLogs;
}

function registryOf(
  layout: RegistryLayout,
  texts: readonly string[],
  options: Partial<Pick<ShardedKeysOptions, 'entryBuilding' | 'ttlMs'>> = {},
): Registry {
  const shards = texts.map((text) => new FakeShard(() => text));
  const logs = captureLogs();
  const keys = new ShardedKeys({
    layout,
    sourceFor: (index, id) => {
      const shard = shards[index];
      if (shard === undefined) throw new Error(`no fake shard ${index}`);
      return shard.source(id);
    },
    logger: logs.logger,
    ttlMs: TTL_MS,
    maxStaleMs: MAX_STALE_MS,
    cacheOptions: { refreshWaitMs: REFRESH_WAIT_MS },
    ...options,
  });
  return { keys, shards, logs };
}

/**
 * Runs the fake clock from one timer to the next until `promise` settles: as settleTiming, without stepping through
 * the time between timers (nothing can settle there), for loops of many requests whose wait is not asserted.
 */
async function settleAtTimers(promise: Promise<unknown>): Promise<void> {
  const state = { settled: false };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  await jest.advanceTimersByTimeAsync(0);
  while (!state.settled && jest.getTimerCount() > 0) await jest.advanceTimersToNextTimerAsync();
}

const fetchesOf = (shards: readonly FakeShard[]): number[] => shards.map((shard) => shard.fetchedAt.length);

/** `items[index]`, which the test knows is there. */
function at<T>(items: readonly T[], index: number): T {
  const item = items[index];
  if (item === undefined) throw new Error(`nothing at ${index}`);
  return item;
}

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2026-11-21T12:00:00Z') });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('ShardedKeys over one secret', () => {
  it('serves its one keyring for every app, known or not, built whole, starts the fetch at init and logs as before, without a shard field', async () => {
    const { keys, shards, logs } = registryOf(singleShardLayout('payment-api-keys'), [SECRET_STRING]);

    keys.warm();
    const known = await keys.getKeys('demo');
    const unknown = await keys.getKeys('nobody');

    expect(fetchesOf(shards)).toEqual([1]);
    expect(unknown.keyring).toBe(known.keyring);
    expect(known.keyring).toBeInstanceOf(Map);
    expect([...known.keyring.keys()]).toEqual(['demo', 'partner', 'hashed']);
    expect(logs.entries()).toEqual([
      expect.objectContaining({ message: 'keys loaded', source: 'payment-api-keys', apps: 3 }),
    ]);
    expect(logs.entries()[0]).not.toHaveProperty('shard');
  });

  it('answers unavailable in the words of the single secret, without a shard number', async () => {
    const { keys, shards } = registryOf(singleShardLayout('payment-api-keys'), ['{}']);
    at(shards, 0).answer = { kind: 'fail', afterMs: 0 };

    await expect(keys.getKeys('demo')).rejects.toThrow(new KeysUnavailableError('keys have never loaded'));
  });
});

describe('ShardedKeys over several shards', () => {
  const SHARDS = 8;
  const layout = layoutOf(SHARDS);
  /** Shard i holds one app, `app-on-<i>`, keyed DEMO_KEY. */
  const apps = Array.from({ length: SHARDS }, (_, index) => appOnShard(index, SHARDS, `app-on-${index}`));
  const texts = apps.map((appId) => JSON.stringify({ [appId]: DEMO_KEY }));

  it('fetches nothing at init, then exactly the home shard of the first request; reads a shard again at once when told it changed, its TTL far from over, and a shard never read stays unread', async () => {
    // Arrange
    const { keys, shards } = registryOf(layout, texts);
    keys.warm();
    const fetchedAtInit = fetchesOf(shards);
    const first = await keys.getKeys(at(apps, 3));
    const fetchedByTheFirst = fetchesOf(shards);
    const added = appOnShard(3, SHARDS, 'added');
    at(shards, 3).text = JSON.stringify({ [at(apps, 3)]: DEMO_KEY, [added]: DEMO_NEXT_KEY });

    // Act
    keys.reload(3);
    keys.reload(6);
    const { keyring } = await keys.getKeys(added);

    // Assert
    expect(fetchedAtInit).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(fetchedByTheFirst).toEqual([0, 0, 0, 1, 0, 0, 0, 0]);
    expect(first.keyring.has(at(apps, 3))).toBe(true);
    expect(keyring.has(added)).toBe(true);
    expect(fetchesOf(shards)).toEqual([0, 0, 0, 2, 0, 0, 0, 0]);
  });

  it('reads each shard at most once per TTL under a flood of unknown app ids, never more than the shards asked for', async () => {
    // Arrange
    const { keys, shards } = registryOf(layout, texts);
    // 300 a TTL: over 30 for each of the 8 shards, so every shard is asked for many times within its TTL.
    const perTtl = 300;
    const unknownIds = fc.sample(fc.stringMatching(/^[a-z0-9-]{1,24}$/), { numRuns: 3 * perTtl, seed: 16 });
    const windows: { shardsAsked: Set<number>; fetchesBefore: number[] }[] = [];

    // Act: three TTLs, 300 unknown ids spread over each, one at a time.
    for (let window = 0; window < 3; window++) {
      const shardsAsked = new Set<number>();
      windows.push({ shardsAsked, fetchesBefore: fetchesOf(shards) });
      for (const appId of unknownIds.slice(window * perTtl, (window + 1) * perTtl)) {
        shardsAsked.add(shardOf(appId, SHARDS));
        const { keyring } = await keys.getKeys(appId);
        expect(keyring.has(appId)).toBe(false);
        await jest.advanceTimersByTimeAsync(TTL_MS / perTtl);
      }
    }

    // Assert: per TTL, one fetch for each shard asked for, none for the others.
    const fetchesAfter = [...windows.slice(1).map((window) => window.fetchesBefore), fetchesOf(shards)];
    windows.forEach(({ shardsAsked, fetchesBefore }, index) => {
      const fetched = at(fetchesAfter, index).map((count, shard) => count - at(fetchesBefore, shard));
      expect(fetched).toEqual(fetched.map((_, shard) => (shardsAsked.has(shard) ? 1 : 0)));
    });
  });

  it('never makes a request for a known app wait on another shard, even one that does not answer', async () => {
    const { keys, shards } = registryOf(layout, texts);
    await keys.getKeys(at(apps, 1));
    at(shards, 2).answer = { kind: 'silent' };

    const stuck = keys.getKeys(at(apps, 2));
    const known = keys.getKeys(at(apps, 1));
    const tookMs = await settleTiming(known);

    expect(tookMs).toBe(0);
    expect((await known).keyring.has(at(apps, 1))).toBe(true);
    expect(await settleTiming(stuck)).toBe(DEADLINE_MS);
    await expect(stuck).rejects.toThrow(new KeysUnavailableError('shard 2: keys have never loaded'));
  });

  it('fails only the apps of a malformed shard, and logs it by shard number, never its content', async () => {
    // Arrange: shard 3 holds something that is not JSON, with a key in it.
    const { keys, shards, logs } = registryOf(layout, texts);
    at(shards, 3).text = `{"${apps[3]}": "${PARTNER_KEY}"`;

    // Act
    const broken = keys.getKeys(at(apps, 3));
    const healthy = await keys.getKeys(at(apps, 4));

    // Assert
    await expect(broken).rejects.toThrow(new KeysUnavailableError('shard 3: keys have never loaded'));
    expect(healthy.keyring.has(at(apps, 4))).toBe(true);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'keys refresh failed',
        shard: 3,
        source: 'payment-api/Test/keys/shard-3',
        error: 'MalformedSecretError: secret is not valid JSON',
      }),
    );
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({ message: 'keys loaded', shard: 4, entries: 1 }),
    );
    expect(logs.lines.join('\n')).not.toContain(PARTNER_KEY);
    expect(logs.entries().flatMap((entry) => Object.keys(entry).filter((name) => !isLogField(name)))).toEqual(
      [],
    );
  });

  it('builds an entry when its app is first asked for, and logs a malformed one then, by shard and position only', async () => {
    // Arrange: shard 6 holds a good app first, then one whose second key is too short.
    const { keys, shards, logs } = registryOf(layout, texts);
    const other = appOnShard(6, SHARDS, 'other');
    at(shards, 6).text = JSON.stringify({
      [at(apps, 6)]: DEMO_KEY,
      [other]: [DEMO_NEXT_KEY, 'short-secretish'],
    });

    // Act
    await keys.getKeys(at(apps, 6));
    const beforeAsked = logs.entries().filter((entry) => entry.message === 'malformed key entry ignored');
    const { keyring } = await keys.getKeys(other);
    keyring.get(other);

    // Assert
    expect(beforeAsked).toEqual([]);
    expect(logs.entries().filter((entry) => entry.message === 'malformed key entry ignored')).toEqual([
      expect.objectContaining({
        level: 'error',
        shard: 6,
        entryPosition: 2,
        keyPosition: 2,
        reason: 'key length must be 16 to 512 characters',
      }),
    ]);
    expect(keyring.get(other)?.keys).toHaveLength(1);
    expect(logs.lines.join('\n')).not.toContain('short-secretish');
    expect(logs.lines.join('\n')).not.toContain(`"appId"`);
  });

  it('builds every entry at load when told to (eager), as with one secret', async () => {
    const { keys, logs } = registryOf(layout, texts, { entryBuilding: 'eager' });

    const { keyring } = await keys.getKeys(at(apps, 0));

    expect(keyring).toBeInstanceOf(Map);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({ message: 'keys loaded', shard: 0, apps: 1 }),
    );
  });
});

describe('ShardedKeys while Secrets Manager fails: one budget for the whole environment', () => {
  const SHARDS = 64;
  const layout = layoutOf(SHARDS);
  const apps = Array.from({ length: SHARDS }, (_, index) => appOnShard(index, SHARDS, `app-on-${index}`));
  const texts = apps.map((appId) => JSON.stringify({ [appId]: DEMO_KEY }));
  const unknownIds = fc.sample(fc.stringMatching(/^[a-z0-9-]{1,24}$/), { numRuns: 600, seed: 24 });

  /** Every fetch start of every shard, in time order. */
  const startsOf = (shards: readonly FakeShard[]): number[] =>
    shards.flatMap((shard) => shard.fetchedAt).sort((a, b) => a - b);

  /** The most fetch starts in any one second (a window opening at each start). */
  function mostInOneSecond(starts: readonly number[]): number {
    let most = 0;
    for (const [index, start] of starts.entries()) {
      let count = 0;
      for (let next = index; next < starts.length && (starts[next] ?? Infinity) < start + 1_000; next++)
        count++;
      most = Math.max(most, count);
    }
    return most;
  }

  /** A flood of unknown ids, one request at a time as a Lambda environment serves them, `gapMs` apart. */
  async function flood(keys: ShardedKeys, count: number, gapMs: number): Promise<Set<string>> {
    const outcomes = new Set<string>();
    for (const appId of unknownIds.slice(0, count)) {
      const request = keys.getKeys(appId);
      await settleAtTimers(request);
      outcomes.add(
        await request.then(
          () => 'answered',
          (error: unknown) => (error as Error).name,
        ),
      );
      await jest.advanceTimersByTimeAsync(gapMs);
    }
    return outcomes;
  }

  const REFUSING: Answer = { kind: 'fail', afterMs: 0 };
  const SILENT: Answer = { kind: 'silent' };

  // Cold: 3 s of requests 10 ms apart, all unavailable. Loaded: every shard read, then past its TTL while Secrets
  // Manager fails, 6 s of requests answered from stale keys. Either way six or more fetch starts, each second's
  // window checked: the fetch that showed the fault, then at most 2 a second.
  it.each<[string, Answer, boolean, number, string]>([
    ['refusing at once, for a cold environment', REFUSING, false, 300, 'KeysUnavailableError'],
    [
      'failing after 400 ms, for a cold environment',
      { kind: 'fail', afterMs: 400 },
      false,
      300,
      'KeysUnavailableError',
    ],
    ['never answering, for a cold environment', SILENT, false, 300, 'KeysUnavailableError'],
    ['refusing at once, once every shard was loaded (stale keys served)', REFUSING, true, 600, 'answered'],
    ['never answering, once every shard was loaded (stale keys served)', SILENT, true, 600, 'answered'],
  ])(
    'starts at most 2 fetches a second across all shards %s, flooded with unknown ids',
    async (_, answer, loaded, requests, outcome) => {
      const { keys, shards } = registryOf(layout, texts);
      if (loaded) {
        for (const appId of apps) await keys.getKeys(appId);
        await jest.advanceTimersByTimeAsync(TTL_MS);
      }
      const loadedAt = startsOf(shards).length;
      for (const shard of shards) shard.answer = answer;

      const outcomes = await flood(keys, requests, 10);

      const starts = startsOf(shards).slice(loadedAt);
      expect(outcomes).toEqual(new Set([outcome]));
      expect(starts.length).toBeGreaterThan(3);
      expect(mostInOneSecond(starts.slice(1))).toBeLessThanOrEqual(2);
      expect(mostInOneSecond(starts)).toBeLessThanOrEqual(3);
    },
  );

  it('recovers on the first fetch that succeeds: every shard is then read at once, as it is needed', async () => {
    const { keys, shards } = registryOf(layout, texts);
    for (const shard of shards) shard.answer = { kind: 'fail', afterMs: 0 };
    await flood(keys, 50, 10);
    for (const shard of shards) shard.answer = { kind: 'text', afterMs: 0 };
    const startsBefore = startsOf(shards).length;

    const served: boolean[] = [];
    const tookMs: number[] = [];
    for (const appId of apps) {
      const request = keys.getKeys(appId);
      tookMs.push(await settleTiming(request, 5));
      served.push((await request).keyring.has(appId));
    }

    // The first request waits its turn (at most 500 ms after the last failed start); none after it waits at all.
    expect(served.every(Boolean)).toBe(true);
    expect(at(tookMs, 0)).toBeLessThanOrEqual(500);
    expect(tookMs.slice(1).every((ms) => ms === 0)).toBe(true);
    expect(startsOf(shards).length - startsBefore).toBeLessThanOrEqual(SHARDS);
  });

  it('asks for a deleted shard once per TTL, not twice a second, and serves the other shards meanwhile', async () => {
    // Arrange
    const { keys, shards } = registryOf(layout, texts);
    const deleted = 19;
    at(shards, deleted).answer = { kind: 'missing' };

    // Act: two TTLs of requests, alternating between the deleted shard's app and another's.
    const outcomes: string[] = [];
    for (let step = 0; step < 1_200; step++) {
      const appId = at(apps, step % 2 === 0 ? deleted : 3);
      const request = keys.getKeys(appId);
      await settleAtTimers(request);
      outcomes.push(
        await request.then(
          ({ keyring }) => String(keyring.has(appId)),
          () => 'unavailable',
        ),
      );
      await jest.advanceTimersByTimeAsync((2 * TTL_MS) / 1_200);
    }

    // Assert: asked at the first request, then no sooner than a TTL after each time.
    const asked = at(shards, deleted).fetchedAt;
    expect(asked.length).toBeGreaterThanOrEqual(2);
    expect(asked.slice(1).every((time, index) => time - at(asked, index) >= TTL_MS)).toBe(true);
    expect(new Set(outcomes.filter((_, step) => step % 2 === 0))).toEqual(new Set(['unavailable']));
    expect(new Set(outcomes.filter((_, step) => step % 2 === 1))).toEqual(new Set(['true']));
  });
});

describe('ShardedKeys during a reshard from 2 to 4 shards: the fallback rule', () => {
  const layout = layoutOf(4, 2);
  const { appId: moving, home, previousHome } = movingApp(4, 2);
  const stayingHome = appOnShard(previousHome, 4, 'staying');
  const MOVED_KEY = PARTNER_KEY;

  /** Shard texts: `moving` in the shards listed, with `key`; `stayingHome` in the moving app's previous home. */
  function texts(movingIn: readonly number[], key = DEMO_KEY): string[] {
    return [0, 1, 2, 3].map((index) =>
      JSON.stringify({
        ...(index === previousHome ? { [stayingHome]: DEMO_KEY } : {}),
        ...(movingIn.includes(index) ? { [moving]: key } : {}),
      }),
    );
  }

  it('serves a moved app from its new home, and one not yet moved from its previous home; judges an app found nowhere against its new home, at once, when that copy is fresh', async () => {
    const notMoved = registryOf(layout, texts([previousHome]));
    const moved = registryOf(layout, texts([home]));

    const fromPrevious = await notMoved.keys.getKeys(moving);
    const fromHome = await moved.keys.getKeys(moving);

    expect([fromPrevious.keyring.has(moving), fromHome.keyring.has(moving)]).toEqual([true, true]);
    // Not yet moved: the new home was read first, then the previous one.
    expect(fetchesOf(notMoved.shards)).toEqual(
      [0, 1, 2, 3].map((index) => (index === home || index === previousHome ? 1 : 0)),
    );
    expect(fetchesOf(moved.shards)).toEqual([0, 1, 2, 3].map((index) => (index === home ? 1 : 0)));

    const unknown = movingApp(4, 2, 'unknown');
    const request = moved.keys.getKeys(unknown.appId);
    const tookMs = await settleTiming(request);

    expect(tookMs).toBe(0);
    expect((await request).keyring.has(unknown.appId)).toBe(false);
  });

  it('lets the new home decide when both copies hold the app (an edit made after the copy wins)', async () => {
    const shardTexts = texts([previousHome]);
    shardTexts[home] = JSON.stringify({ [moving]: MOVED_KEY });
    const { keys } = registryOf(layout, shardTexts);

    const { keyring } = await keys.getKeys(moving);

    expect(keyring.get(moving)?.keys.map((key) => key.digest)).toEqual([matchDigestOf(MOVED_KEY)]);
  });

  describe('when the new home is stale and the previous home was read after the app was removed from it', () => {
    /**
     * At t0 both shards are read: the app is only in its previous home. Then the reshard copies it, waits a TTL,
     * removes the old copy. At t0 + TTL, a request finds both copies due: the new home's refresh is slow (or
     * failing), so it is served stale (without the app) after 250 ms; the previous home's refresh is quick and
     * shows the removal.
     */
    async function raceAfterRemoval(
      newHomeAnswers: Answer,
    ): Promise<{ request: Promise<CurrentKeys> } & Registry> {
      const registry = registryOf(layout, texts([previousHome]));
      expect((await registry.keys.getKeys(moving)).keyring.has(moving)).toBe(true);
      at(registry.shards, home).text = at(texts([home]), home);
      at(registry.shards, previousHome).text = at(texts([]), previousHome);
      await jest.advanceTimersByTimeAsync(TTL_MS);
      at(registry.shards, home).answer = newHomeAnswers;
      return { ...registry, request: registry.keys.getKeys(moving) };
    }

    it('waits for the refresh in flight, slower than the 250 ms wait, and serves the app: never a 401', async () => {
      const { request } = await raceAfterRemoval({ kind: 'text', afterMs: 1_200 });

      const tookMs = await settleTiming(request);

      expect(tookMs).toBe(1_200);
      expect(await request).toMatchObject({ stale: false });
      expect((await request).keyring.has(moving)).toBe(true);
    });

    it('answers 503, naming the new home, when that refresh fails: never a 401', async () => {
      const { request } = await raceAfterRemoval({ kind: 'fail', afterMs: 400 });

      await settleTiming(request);

      await expect(request).rejects.toThrow(
        new KeysUnavailableError(
          `shard ${home}: keys are older than those of shard ${previousHome} and cannot be refreshed`,
        ),
      );
    });

    it('answers 503 at once while a failed refresh is being spaced out, and serves the app once one succeeds', async () => {
      const { request, keys, shards } = await raceAfterRemoval({ kind: 'fail', afterMs: 0 });
      await settleTiming(request);
      await expect(request).rejects.toThrow(KeysUnavailableError);

      const spaced = keys.getKeys(moving);
      await expect(spaced).rejects.toThrow(KeysUnavailableError);
      at(shards, home).answer = { kind: 'text', afterMs: 0 };
      await jest.advanceTimersByTimeAsync(5_000);

      expect((await keys.getKeys(moving)).keyring.has(moving)).toBe(true);
    });
  });

  it('waits for one more refresh when the one in flight started before the app was copied (a fetch longer than the TTL)', async () => {
    // Arrange: the new home's copy is read at 0 (without the app); its next fetch starts at 1 TTL, before the
    // reshard copies the app at TTL + 100, and takes 1.3 TTL; the old copy goes at TTL + 100 + TTL.
    const ttlMs = 1_000;
    const copyAt = Date.now() + ttlMs + 100;
    const removeAt = copyAt + ttlMs;
    const { keys, shards } = registryOf(layout, texts([previousHome]), { ttlMs });
    at(shards, home).textAt = (readAt) => at(texts(readAt >= copyAt ? [home] : []), home);
    at(shards, previousHome).textAt = (readAt) =>
      at(texts(readAt < removeAt ? [previousHome] : []), previousHome);
    await keys.getKeys(moving);
    await jest.advanceTimersByTimeAsync(ttlMs);
    at(shards, home).answer = { kind: 'text', afterMs: 1_300 };
    const duringTheSlowFetch = keys.getKeys(moving);
    at(shards, home).answer = { kind: 'text', afterMs: 0 };
    await settleTiming(duringTheSlowFetch);

    // Act: after the removal, while that fetch is still under way.
    await jest.advanceTimersByTimeAsync(removeAt + 150 - Date.now());
    const afterRemoval = keys.getKeys(moving);
    await settleTiming(afterRemoval);

    // Assert: served both times; the new home was fetched at 0, at 1 TTL, and once more after the slow fetch.
    expect((await duringTheSlowFetch).keyring.has(moving)).toBe(true);
    expect((await afterRemoval).keyring.has(moving)).toBe(true);
    expect(at(shards, home).fetchedAt).toHaveLength(3);
  });

  it('refuses an unknown app without waiting when the stale new home was read after the previous home', async () => {
    // Arrange: the previous home is read first, the new home 100 ms later; both then go past the TTL, and both
    // refreshes are slow.
    const { keys, shards } = registryOf(layout, texts([home]));
    await keys.getKeys(stayingHome);
    await jest.advanceTimersByTimeAsync(100);
    await keys.getKeys(moving);
    await jest.advanceTimersByTimeAsync(TTL_MS);
    for (const shard of shards) shard.answer = { kind: 'text', afterMs: 3_000 };
    const unknown = appMovingBetween({ shards: 4, home }, { previousShards: 2, previousHome }, 'unknown');

    // Act
    const request = keys.getKeys(unknown);
    const tookMs = await settleTiming(request);

    // Assert: two waits of 250 ms (one per shard's refresh), none for the refresh to land.
    expect(tookMs).toBe(2 * REFRESH_WAIT_MS);
    expect(await request).toMatchObject({ stale: true });
  });

  it('serves an app from its previous home while its new home cannot be read at all', async () => {
    const { keys, shards } = registryOf(layout, texts([previousHome]));
    at(shards, home).answer = { kind: 'fail', afterMs: 0 };

    const { keyring } = await keys.getKeys(moving);

    expect(keyring.has(moving)).toBe(true);
  });

  it('answers 503, naming the shard, for an app found nowhere while its previous home cannot be read', async () => {
    const { keys, shards } = registryOf(layout, texts([]));
    at(shards, previousHome).answer = { kind: 'fail', afterMs: 0 };

    await expect(keys.getKeys(moving)).rejects.toThrow(
      new KeysUnavailableError(`shard ${previousHome}: keys have never loaded`),
    );
  });
});

describe('ShardedKeys against any timing of a reshard (property)', () => {
  const TTL = 1_000;
  const layout = layoutOf(4, 2);
  const { appId: moving, home, previousHome } = movingApp(4, 2);
  const staying = appOnShard(previousHome, 4, 'staying');

  /** One fetch of a shard: how long it takes, when within it Secrets Manager reads the secret, whether it fails. */
  const fetchArb = fc.record({
    durationMs: fc.integer({ min: 0, max: 1_400 }),
    readsAtEnd: fc.boolean(),
    fails: fc.boolean(),
  });
  type PlannedFetch = typeof fetchArb extends fc.Arbitrary<infer T> ? T : never;

  const scheduleArb = (failures: boolean) =>
    fc.record({
      copyAtMs: fc.integer({ min: 0, max: 4_000 }),
      // The reshard waits at least a TTL between copying the app and removing its old copy.
      settleMs: fc.integer({ min: TTL, max: TTL + 1_500 }),
      fetches: fc.tuple(
        ...[0, 1, 2, 3].map(() =>
          fc.array(
            fetchArb.map((planned) => ({ ...planned, fails: failures && planned.fails })),
            { minLength: 1, maxLength: 6 },
          ),
        ),
      ),
      requests: fc.array(
        fc.record({ app: fc.constantFrom(moving, staying), gapMs: fc.integer({ min: 0, max: 1_500 }) }),
        { minLength: 4, maxLength: 14 },
      ),
    });

  /** Runs one schedule in one execution environment, requests one at a time; returns the moving app's outcomes. */
  async function run(schedule: ReturnType<typeof scheduleArb> extends fc.Arbitrary<infer T> ? T : never) {
    jest.clearAllTimers();
    const start = Date.now();
    const copyAt = start + schedule.copyAtMs;
    const removeAt = copyAt + schedule.settleMs;
    const textAt = (index: number, readAt: number): string =>
      JSON.stringify({
        ...(index === previousHome ? { [staying]: DEMO_KEY } : {}),
        ...(index === home && readAt >= copyAt ? { [moving]: DEMO_KEY } : {}),
        ...(index === previousHome && readAt < removeAt ? { [moving]: DEMO_KEY } : {}),
      });
    const fetchCounts = [0, 0, 0, 0];
    const keys = new ShardedKeys({
      layout,
      sourceFor: (index, id) => ({
        description: id,
        deadlineMs: DEADLINE_MS,
        fetchSecretString: () => {
          const plan = schedule.fetches[index] as PlannedFetch[];
          const count = at(fetchCounts, index);
          fetchCounts[index] = count + 1;
          const planned = at(plan, count % plan.length);
          const startedAt = Date.now();
          const readAt = planned.readsAtEnd ? startedAt + planned.durationMs : startedAt;
          return new Promise<string>((resolve, reject) => {
            setTimeout(() => {
              if (planned.fails) reject(new Error('ThrottlingException: Rate exceeded'));
              else resolve(textAt(index, readAt));
            }, planned.durationMs);
          });
        },
      }),
      logger: captureLogs().logger,
      ttlMs: TTL,
      maxStaleMs: 60_000,
    });
    const outcomes: ('served' | 'refused' | 'unavailable')[] = [];
    for (const request of schedule.requests) {
      await jest.advanceTimersByTimeAsync(request.gapMs);
      const pending = keys.getKeys(request.app);
      await settleAtTimers(pending);
      const outcome = await pending.then(
        ({ keyring }) => (keyring.has(request.app) ? ('served' as const) : ('refused' as const)),
        (error: unknown) => {
          if (!(error instanceof KeysUnavailableError)) throw error;
          return 'unavailable' as const;
        },
      );
      if (request.app === moving) outcomes.push(outcome);
    }
    return outcomes;
  }

  it('serves a moved app at every moment while Secrets Manager answers, however slowly and whichever copy it reads', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb(false), async (schedule) => {
        const outcomes = await run(schedule);

        expect(outcomes.filter((outcome) => outcome !== 'served')).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it('never refuses a moved app when some fetches fail: it is served, or answered 503', async () => {
    await fc.assert(
      fc.asyncProperty(scheduleArb(true), async (schedule) => {
        const outcomes = await run(schedule);

        expect(outcomes.filter((outcome) => outcome === 'refused')).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });
});
