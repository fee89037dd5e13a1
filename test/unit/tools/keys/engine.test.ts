import {
  freshKey,
  networkChange,
  newKeyChange,
  removeAppChange,
  revokeChange,
  type EditResult,
} from '../../../../tools/keys/changes';
import {
  backoffMs,
  ConflictError,
  planEdits,
  writePlan,
  writeShard,
  type Change,
  type RetryOptions,
} from '../../../../tools/keys/engine';
import { KeyStoreError } from '../../../../tools/keys/key-store';
import { formatResult } from '../../../../tools/keys/output';
import { SecretTooLargeError } from '../../../../tools/keys/size-guard';
import {
  addApp,
  addKey,
  KeyDocumentError,
  keyIdOf,
  parseKeyDocument,
  serializeKeyDocument,
} from '../../../../shared/keys/key-document';
import { generateKey } from '../../../../shared/keys/key-material';
import { SECRET_MAX_BYTES } from '../../../../shared/keys/secret-size';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';
import {
  keysTextOfSize,
  MemoryStore,
  oneShardRegistry,
  plainKeysText as text,
  storedKeysOf,
} from '../../../support/keys-cli';

const NOW = Date.parse('2026-06-01T12:00:00Z');

/** The engine's compare-and-swap write of the one shard `store` holds. */
async function editKeys<Result>(
  store: MemoryStore,
  change: Change<Result>,
  options: RetryOptions & { readonly createIfMissing?: boolean } = {},
) {
  const { createIfMissing = false, ...retry } = options;
  const { status, ...written } = await writeShard(oneShardRegistry(store), 0, change, {
    createIfMissing,
    retry,
  });
  return { ...written, wrote: status === 'written' };
}
const keysIn = (store: MemoryStore, appId: string): readonly string[] => storedKeysOf(store.text, appId);

/** No real waiting in unit tests; the delays asked for are recorded. */
function recordingSleep(): { sleep: (ms: number) => Promise<void>; delays: number[] } {
  const delays: number[] = [];
  return {
    delays,
    sleep: (ms) => {
      delays.push(ms);
      return Promise.resolve();
    },
  };
}

/** `key`, stored in plain text, given to `appId` by add-app or (the default) rotate at NOW. */
const newKey = (key: string, appId = 'demo', command: 'add-app' | 'rotate' = 'rotate'): Change<unknown> =>
  newKeyChange({ command, appId, fresh: freshKey(key, 'plain'), now: NOW });

describe('writeShard', () => {
  it('reads, applies and replaces once when nobody else writes', async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));
    const key = generateKey();

    const outcome = await editKeys(store, newKey(key));

    expect(outcome.attempts).toBe(1);
    expect(store.replaceCalls).toBe(1);
    expect(keysIn(store, 'demo')).toEqual([DEMO_KEY, key]);
  });

  it('on a conflict re-reads and re-applies the same key to the newer document, keeping both writes', async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));
    store.beforeReplace = (s) => {
      s.beforeReplace = undefined;
      s.write(
        serializeKeyDocument(addKey(parseKeyDocument(s.text ?? ''), 'demo', { stored: DEMO_NEXT_KEY })),
      );
    };
    const key = generateKey();
    const { sleep, delays } = recordingSleep();

    const outcome = await editKeys(store, newKey(key), { sleep, random: () => 0.5 });

    expect(outcome.attempts).toBe(2);
    expect(delays).toEqual([50]);
    expect(keysIn(store, 'demo')).toEqual([DEMO_KEY, DEMO_NEXT_KEY, key]);
  });

  it('gives up after maxAttempts conflicts with a clear message, having stored nothing of its own', async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));
    let otherWrites = 0;
    store.beforeReplace = (s) => {
      otherWrites++;
      s.write(
        serializeKeyDocument(
          addApp(parseKeyDocument(s.text ?? ''), `other-${otherWrites}`, { stored: PARTNER_KEY }),
        ),
      );
    };
    const key = generateKey();
    const { sleep, delays } = recordingSleep();

    const edit = editKeys(store, newKey(key), { sleep, random: () => 1 });

    await expect(edit).rejects.toBeInstanceOf(ConflictError);
    await expect(edit).rejects.toThrow(
      'the keys changed under us 8 times; nothing was lost, re-run the command',
    );
    expect(store.replaceCalls).toBe(8);
    expect(delays).toEqual([100, 200, 400, 800, 1600, 1600, 1600]);
    expect(store.text).not.toContain(key);
    expect(keysIn(store, 'other-8')).toEqual([PARTNER_KEY]);
  });

  it('sees its own write in the re-read after a lost answer, and does not write the key twice', async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));
    store.reportConflictAfterWriting = true;
    const key = generateKey();

    const outcome = await editKeys(store, newKey(key), { sleep: () => Promise.resolve() });

    expect(outcome.attempts).toBe(2);
    expect(store.replaceCalls).toBe(1);
    expect(keysIn(store, 'demo')).toEqual([DEMO_KEY, key]);
  });

  it('starts from an empty document when the store is empty and creating is allowed', async () => {
    const store = new MemoryStore(undefined);
    const key = generateKey();

    await editKeys(store, newKey(key, 'demo', 'add-app'), { createIfMissing: true });

    expect(keysIn(store, 'demo')).toEqual([key]);
  });

  it('refuses an empty store when creating is not allowed', async () => {
    const store = new MemoryStore(undefined);

    const edit = editKeys(store, newKey(generateKey()));

    await expect(edit).rejects.toThrow(new KeyStoreError('memory store does not exist (add-app creates it)'));
  });

  it('writes nothing when the change refuses the document', async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));

    const edit = editKeys(store, newKey(generateKey(), 'ghost'));

    await expect(edit).rejects.toThrow(new KeyDocumentError('unknown app: ghost'));
    expect(store.replaceCalls).toBe(0);
  });

  it.each([
    ['one of several keys', { demo: [DEMO_KEY, DEMO_NEXT_KEY] }, false, 'revoked'],
    ['the last key, with force', { demo: [DEMO_KEY] }, true, 'app-removed'],
  ])('reports revoking %s when nobody else writes', async (_label, entries, force, expected) => {
    const store = new MemoryStore(text(entries));

    const outcome = await editKeys(store, revokeChange('demo', keyIdOf(DEMO_KEY), force));

    expect(outcome.result).toMatchObject({ outcome: expected });
  });
});

describe('writeShard: writes that change nothing', () => {
  it('writes nothing when the change leaves the document as it was', async () => {
    const store = new MemoryStore(
      serializeKeyDocument(
        new Map([['demo', { keys: [{ stored: DEMO_KEY }], allowedCidrs: ['10.0.0.0/8'] }]]),
      ),
    );

    const outcome = await editKeys(store, networkChange('demo', { kind: 'allow', cidrs: ['10.0.0.0/8'] }));

    expect(outcome.result).toEqual({ command: 'allow', appId: 'demo', allowedCidrs: ['10.0.0.0/8'] });
    expect(store.replaceCalls).toBe(0);
  });
});

describe('writeShard: a retry that finds the state asked for', () => {
  const withBlocks = (cidrs: string[]) =>
    serializeKeyDocument(new Map([['demo', { keys: [{ stored: DEMO_KEY }], allowedCidrs: cidrs }]]));

  it.each<[string, string, string, Change<unknown>, EditResult, string]>([
    [
      'a key revoked by a concurrent writer',
      text({ demo: [DEMO_KEY, DEMO_NEXT_KEY] }),
      text({ demo: [DEMO_NEXT_KEY] }),
      revokeChange('demo', keyIdOf(DEMO_KEY), false),
      {
        command: 'revoke',
        appId: 'demo',
        keyId: keyIdOf(DEMO_KEY),
        keyIds: [keyIdOf(DEMO_NEXT_KEY)],
        outcome: 'key-already-gone',
      },
      `app demo: key ${keyIdOf(DEMO_KEY)} is already revoked; valid keys: ${keyIdOf(DEMO_NEXT_KEY)}\n`,
    ],
    [
      'an app a concurrent writer removed whole, with nothing to revoke',
      text({ demo: [DEMO_KEY], partner: [PARTNER_KEY] }),
      text({ partner: [PARTNER_KEY] }),
      revokeChange('demo', keyIdOf(DEMO_KEY), true),
      { command: 'revoke', appId: 'demo', keyId: keyIdOf(DEMO_KEY), keyIds: [], outcome: 'app-already-gone' },
      'app demo is already gone; nothing to revoke\n',
    ],
    [
      'an app removed by a concurrent writer',
      text({ demo: [DEMO_KEY], partner: [PARTNER_KEY] }),
      text({ partner: [PARTNER_KEY] }),
      removeAppChange('demo'),
      { command: 'remove-app', appId: 'demo', removedKeyIds: [] },
      'removed app demo\n',
    ],
    [
      'blocks a concurrent writer already disallowed',
      withBlocks(['10.0.0.0/8', '192.0.2.0/24']),
      withBlocks(['192.0.2.0/24']),
      networkChange('demo', { kind: 'disallow', cidrs: ['10.0.0.0/8'] }),
      { command: 'disallow', appId: 'demo', allowedCidrs: ['192.0.2.0/24'] },
      'app demo: may call only from 192.0.2.0/24\n',
    ],
  ])(
    'treats %s as done on the retry, writing nothing more',
    async (_label, seed, other, change, result, line) => {
      const store = new MemoryStore(seed);
      store.beforeReplace = (s) => {
        s.beforeReplace = undefined;
        s.write(other);
      };

      const outcome = await editKeys(store, change, { sleep: () => Promise.resolve() });

      expect(outcome.attempts).toBe(2);
      expect(outcome.result).toEqual(result);
      expect(formatResult(result, NOW)).toBe(line);
      expect(store.replaceCalls).toBe(1);
      expect(store.text).toBe(other);
    },
  );
});

describe('writeShard: the size guard', () => {
  /** What one more generated key costs in the demo app's list: the key, its quotes and a comma. */
  const ONE_KEY = 42 + 3;

  it('refuses a write past 65,536 bytes with the bytes over and what to do, and writes nothing', async () => {
    const seed = keysTextOfSize(SECRET_MAX_BYTES - ONE_KEY + 41);
    const store = new MemoryStore(seed);

    const edit = editKeys(store, newKey(generateKey()));

    await expect(edit).rejects.toBeInstanceOf(SecretTooLargeError);
    await expect(edit).rejects.toThrow(
      'the keys would take 65,577 bytes, 41 over the 65,536 a secret can hold; nothing was written. Make room ' +
        'first: "prune" removes expired keys, "revoke" the keys clients no longer use (fewer keys per app), and a ' +
        'sha256: digest (71 characters) costs more than a plain generated key (42)',
    );
    expect(store.replaceCalls).toBe(0);
    expect(store.text).toBe(seed);
  });

  it('writes from 80% full, then warns with the bytes, the fill and what to do', async () => {
    const store = new MemoryStore(keysTextOfSize(55_000));

    const outcome = await editKeys(store, newKey(generateKey()));

    expect(store.replaceCalls).toBe(1);
    expect(outcome.warnings).toEqual([
      'the keys now take 55,045 bytes, 84.0% of the 65,536 a secret can hold (10,491 left; past the limit every ' +
        'write and every scheduled rotation fails): "prune" removes expired keys, "revoke" the keys clients no ' +
        'longer use (fewer keys per app), and a sha256: digest (71 characters) costs more than a plain generated ' +
        'key (42)',
    ]);
  });

  it('lets a write that makes the secret smaller through even when it stays over 80%', async () => {
    const seed = keysTextOfSize(60_000);
    const store = new MemoryStore(seed);

    const outcome = await editKeys(store, revokeChange('demo', keyIdOf(DEMO_KEY), true));

    expect(store.text?.length).toBeLessThan(seed.length);
    expect(outcome.warnings).toEqual([expect.stringMatching(/^the keys now take 59,9\d\d bytes, 91\.\d% /)]);
  });
});

describe('planEdits and writePlan', () => {
  const addEdit = (appId: string) => ({ appId, change: newKey(generateKey(), appId, 'add-app') });

  it('measures each shard as it will be written, and names one past 80% before anything is written', async () => {
    const store = new MemoryStore(keysTextOfSize(55_000));
    const registry = oneShardRegistry(store);

    const plan = await planEdits(registry, [addEdit('partner-0001')], {
      createIfMissing: false,
      checkBudget: false,
    });

    expect(store.replaceCalls).toBe(0);
    expect(plan.problems).toEqual([]);
    expect(plan.warnings).toEqual([
      expect.stringMatching(/^the keys will take 55,0\d\d bytes, 84\.\d% of the 65,536 /),
    ]);
    const writes = await writePlan(registry, plan, { createIfMissing: false, concurrency: 1 });
    expect(plan.shards[0]?.size.bytes).toBe(Buffer.byteLength(store.text ?? ''));
    // Warned once, by the plan: the write of the document it measured adds no second warning.
    expect(writes).toEqual([expect.objectContaining({ status: 'written', warnings: [] })]);
  });

  it("with release, lets each shard's edits and results go once onShard has had them", async () => {
    const store = new MemoryStore(text({ demo: [DEMO_KEY] }));
    const registry = oneShardRegistry(store);
    const plan = await planEdits(registry, [addEdit('partner-0001'), addEdit('partner-0002')], {
      createIfMissing: false,
      checkBudget: false,
    });
    const heard: number[] = [];

    const writes = await writePlan(registry, plan, {
      createIfMissing: false,
      concurrency: 1,
      release: true,
      onShard: (write) => {
        heard.push(write.status === 'failed' ? -1 : write.results.length);
        return undefined;
      },
    });

    expect(heard).toEqual([2]);
    expect(writes).toEqual([expect.objectContaining({ status: 'written', results: [] })]);
    expect(plan.edits).toEqual([undefined, undefined]);
    expect(keysIn(store, 'partner-0002')).toHaveLength(1);
  });
});

describe('backoffMs', () => {
  it.each([
    [3, 0.5, 200],
    [4, 0, 0],
  ])('attempt %i with random %f waits %i ms', (attempt, random, expected) => {
    expect(backoffMs(attempt, () => random)).toBe(expected);
  });
});
