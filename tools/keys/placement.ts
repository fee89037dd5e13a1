import {
  byCodeUnit,
  serializeKeyDocument,
  type DocumentApp,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { shardsToSearch, type RegistryLayout } from '../../shared/keys/registry';
import { shardOf } from '../../shared/keys/shard';

/**
 * Where each app of a registry is, as read, against where it belongs (shardOf under the layout's `shards`). Pure:
 * the documents come in by shard index. Readers (the Lambda, the local server, the CLI) look in
 * shardsToSearch(layout, appId) in order and take the first copy they find: that copy is the app's, any later
 * one a leftover of a move.
 */

export interface AppPlacement {
  readonly appId: string;
  /** Its shard under `shards`. */
  readonly home: number;
  /** Every shard holding a copy, ascending. */
  readonly copies: readonly number[];
  /** The copy readers use: the first shard in search order that holds one; undefined when none does. */
  readonly served: number | undefined;
}

export interface RegistryPlacement {
  /** Every app, in code-unit order. */
  readonly apps: readonly AppPlacement[];
  /** Apps with a copy outside their home: a reshard under way or left unfinished. */
  readonly misplaced: readonly AppPlacement[];
  /** Apps no reader finds: no copy in any shard it searches. */
  readonly unreachable: readonly AppPlacement[];
}

export function placeApps(
  layout: Pick<RegistryLayout, 'shards' | 'previousShards'>,
  documents: ReadonlyMap<number, KeyDocument>,
): RegistryPlacement {
  const copies = groupBy(
    [...documents]
      .sort(([a], [b]) => a - b)
      .flatMap(([index, document]) => [...document.keys()].map((appId) => [appId, index] as const)),
  );
  const apps = [...copies.keys()].sort(byCodeUnit).map((appId): AppPlacement => {
    const held = copies.get(appId) ?? [];
    return {
      appId,
      home: shardOf(appId, layout.shards),
      copies: held,
      served: shardsToSearch(layout, appId).find((index) => held.includes(index)),
    };
  });
  return {
    apps,
    misplaced: apps.filter((app) => app.copies.some((index) => index !== app.home)),
    unreachable: apps.filter((app) => app.served === undefined),
  };
}

/** Whether two app entries are written alike: the same keys, expiries, allowlist and limit, in the same order. */
export function sameEntry(a: DocumentApp | undefined, b: DocumentApp | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return serializeKeyDocument(new Map([['app', a]])) === serializeKeyDocument(new Map([['app', b]]));
}

/** One app to copy to its home, and the entry copied: the copy readers use, else the first there is. */
export interface Move {
  readonly appId: string;
  readonly from: number;
  readonly to: number;
  readonly entry: DocumentApp;
}

/** A copy to remove once its app is at home: a leftover no reader uses any more. */
export interface Leftover {
  readonly appId: string;
  readonly from: number;
  readonly home: number;
}

export interface ReshardPlan {
  readonly moves: readonly Move[];
  readonly leftovers: readonly Leftover[];
}

/**
 * What a reshard has left to do, from what it read: copy each misplaced app that is not yet at home, then remove
 * every copy outside its home. Computed afresh at each run, so a reshard stopped anywhere is finished by running
 * it again.
 */
export function planReshard(
  layout: Pick<RegistryLayout, 'shards' | 'previousShards'>,
  documents: ReadonlyMap<number, KeyDocument>,
): ReshardPlan {
  const moves: Move[] = [];
  const leftovers: Leftover[] = [];
  for (const app of placeApps(layout, documents).misplaced) {
    const away = app.copies.filter((index) => index !== app.home);
    if (!app.copies.includes(app.home)) {
      const from = app.served !== undefined && app.served !== app.home ? app.served : (away[0] ?? app.home);
      const entry = documents.get(from)?.get(app.appId);
      if (entry !== undefined) moves.push({ appId: app.appId, from, to: app.home, entry });
    }
    for (const from of away) leftovers.push({ appId: app.appId, from, home: app.home });
  }
  return { moves, leftovers };
}

/** Items grouped by their key (a shard index, an app id), in the order each key first comes. */
export function groupBy<Key, Item>(items: Iterable<readonly [Key, Item]>): Map<Key, Item[]> {
  const groups = new Map<Key, Item[]>();
  for (const [key, item] of items) {
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [item]);
    else group.push(item);
  }
  return groups;
}

/** Items grouped by a shard index, ascending. */
export function byShard<Item>(
  items: readonly Item[],
  shardOfItem: (item: Item) => number,
): Map<number, Item[]> {
  const groups = groupBy(items.map((item) => [shardOfItem(item), item] as const));
  return new Map([...groups].sort(([a], [b]) => a - b));
}
