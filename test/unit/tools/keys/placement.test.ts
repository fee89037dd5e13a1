import fc from 'fast-check';
import { withApp, type DocumentApp, type KeyDocument } from '../../../../shared/keys/key-document';
import { shardsToSearch } from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';
import { placeApps, planReshard, sameEntry } from '../../../../tools/keys/placement';

const app = (key: string): DocumentApp => ({ keys: [{ stored: key }] });

/** Apps placed by `shards`, as a registry holds them before a reshard. */
function placed(appIds: readonly string[], shards: number, slots: number): Map<number, KeyDocument> {
  const documents = new Map<number, KeyDocument>(Array.from({ length: slots }, (_, i) => [i, new Map()]));
  for (const appId of appIds) {
    const home = shardOf(appId, shards);
    documents.set(home, withApp(documents.get(home) ?? new Map(), appId, app(`key-of-${appId}-0123456789`)));
  }
  return documents;
}

/** What a reshard writes: the copies home, then the removals. */
function carryOut(documents: Map<number, KeyDocument>, layout: { shards: number; previousShards?: number }) {
  const plan = planReshard(layout, documents);
  for (const move of plan.moves) {
    documents.set(move.to, withApp(documents.get(move.to) ?? new Map(), move.appId, move.entry));
  }
  for (const leftover of plan.leftovers) {
    documents.set(
      leftover.from,
      withApp(documents.get(leftover.from) ?? new Map(), leftover.appId, undefined),
    );
  }
  return plan;
}

const appIdArbitrary = fc.stringMatching(/^[a-z][a-z0-9-]{2,20}$/);

describe('planReshard', () => {
  it('moves only the apps whose home changed, each from where readers find it, and leaves each at home alone', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(appIdArbitrary, { maxLength: 60 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 16 }),
        (appIds, before, after) => {
          fc.pre(before !== after);
          const documents = placed(appIds, before, Math.max(before, after));
          const layout = { shards: after, previousShards: before };

          const plan = carryOut(documents, layout);

          const moving = appIds.filter((id) => shardOf(id, before) !== shardOf(id, after));
          expect(plan.moves.map((move) => move.appId).sort()).toEqual([...moving].sort());
          for (const move of plan.moves) expect(move.from).toBe(shardsToSearch(layout, move.appId)[1]);
          for (const appId of appIds) {
            const holders = [...documents].filter(([, document]) => document.has(appId)).map(([i]) => i);
            expect(holders).toEqual([shardOf(appId, after)]);
          }
          expect(planReshard(layout, documents)).toEqual({ moves: [], leftovers: [] });
        },
      ),
    );
  });

  it('does not copy an app already at home again; it only removes the leftover copy', () => {
    const appId = ['a1', 'b2', 'c3', 'd4', 'e5', 'f6'].find((id) => shardOf(id, 4) !== shardOf(id, 2)) ?? '';
    const documents = new Map<number, KeyDocument>([
      [shardOf(appId, 2), new Map([[appId, app('old-copy-0123456789abcdef')]])],
      [shardOf(appId, 4), new Map([[appId, app('new-home-0123456789abcdef')]])],
    ]);

    const plan = planReshard({ shards: 4, previousShards: 2 }, documents);

    expect(plan).toEqual({
      moves: [],
      leftovers: [{ appId, from: shardOf(appId, 2), home: shardOf(appId, 4) }],
    });
  });
});

describe('placeApps', () => {
  it('says which copy readers use, which apps are misplaced and which no reader finds', () => {
    const ids = Array.from({ length: 40 }, (_, i) => `app-${i}`);
    const moving = ids.find((id) => shardOf(id, 4) !== shardOf(id, 2)) ?? '';
    const lost = ids.find((id) => id !== moving && shardOf(id, 4) !== shardOf(id, 2)) ?? '';
    const documents = new Map<number, KeyDocument>([
      [shardOf(moving, 2), new Map([[moving, app('moving-key-0123456789abcdef')]])],
      [shardOf(lost, 2), new Map([[lost, app('lost-key-0123456789abcdef')]])],
    ]);

    const during = placeApps({ shards: 4, previousShards: 2 }, documents);
    const after = placeApps({ shards: 4 }, documents);

    expect(during.misplaced.map((entry) => entry.appId).sort()).toEqual([lost, moving].sort());
    expect(during.unreachable).toEqual([]);
    expect(during.apps.find((entry) => entry.appId === moving)?.served).toBe(shardOf(moving, 2));
    expect(after.unreachable.map((entry) => entry.appId).sort()).toEqual([lost, moving].sort());
  });
});

describe('sameEntry', () => {
  it('compares entries as they would be written', () => {
    expect(sameEntry(app('k-0123456789abcdef'), { keys: [{ stored: 'k-0123456789abcdef' }] })).toBe(true);
    expect(sameEntry(app('k-0123456789abcdef'), { ...app('k-0123456789abcdef'), allowedCidrs: [] })).toBe(
      false,
    );
    expect(sameEntry(undefined, app('k-0123456789abcdef'))).toBe(false);
    expect(sameEntry(undefined, undefined)).toBe(true);
  });
});
