import { byCodeUnit, parseKeyDocument, withApp, type KeyDocument } from '../../shared/keys/key-document';
import { shardSlots, shardsToSearch } from '../../shared/keys/registry';
import type { PruneResult } from './commands';
import { editKeys, ShardError, type Change, type EditOptions, type EditOutcome } from './edit';
import { KeyStoreError, type Snapshot } from './key-store';
import { placeApps, type RegistryPlacement } from './placement';
import { shardLabel, type Registry } from './registry';

/**
 * The key CLI's commands on a registry of shards. An app is edited where readers find it: the first shard in
 * shardsToSearch that holds it (its home, or while a reshard is under way the home it had before), and added in its
 * home. On a registry of one shard every command reads and writes exactly as it did before shards existed.
 */

export type RegistryEditOptions = Omit<EditOptions, 'createIfMissing' | 'firstRead' | 'shardLabel'> & {
  /** A store with nothing in it yet starts as an empty document (add-app on a key file). */
  readonly createIfMissing?: boolean;
};

function editOptions(registry: Registry, index: number, options: RegistryEditOptions, firstRead?: Snapshot) {
  return {
    ...options,
    ...(registry.sharded ? { shardLabel: shardLabel(registry, index) } : {}),
    ...(firstRead === undefined ? {} : { firstRead }),
  };
}

/** A shard's document as read; a store with nothing in it is empty when `createIfMissing`. */
export function documentOfShard(
  registry: Registry,
  index: number,
  snapshot: Snapshot,
  createIfMissing = false,
): KeyDocument {
  if (snapshot.text === undefined) {
    if (createIfMissing) return new Map();
    throw new KeyStoreError(`${registry.shard(index).store.description} does not exist (add-app creates it)`);
  }
  const text = snapshot.text;
  try {
    return parseKeyDocument(text);
  } catch (error) {
    if (!registry.sharded || !(error instanceof Error)) throw error;
    throw new ShardError(shardLabel(registry, index), error);
  }
}

/** Every shard's document, read in as few calls as the registry allows. */
export async function readAllDocuments(
  registry: Registry,
  createIfMissing = false,
): Promise<{
  readonly snapshots: ReadonlyMap<number, Snapshot>;
  readonly documents: ReadonlyMap<number, KeyDocument>;
}> {
  const indices = Array.from({ length: shardSlots(registry.manifest) }, (_, index) => index);
  const snapshots = await registry.readShards(indices);
  const documents = new Map<number, KeyDocument>();
  for (const [index, snapshot] of snapshots) {
    documents.set(index, documentOfShard(registry, index, snapshot, createIfMissing));
  }
  return { snapshots, documents };
}

export async function registryPlacement(registry: Registry): Promise<RegistryPlacement> {
  const { documents } = await readAllDocuments(registry);
  return placeApps(registry.manifest, documents);
}

/** Removes `appId` from a shard if it is there: a leftover copy that would otherwise serve a removed app again. */
function removeLeftoverChange(appId: string): Change<boolean> {
  return (document) =>
    document.has(appId)
      ? { next: withApp(document, appId, undefined), result: true }
      : { next: undefined, result: false };
}

/**
 * Edits one app where readers find it, or (`adding`) adds it in its home. During a reshard an app may have a
 * second copy in a shard searched later; if the edit removes the app, that copy goes too, since readers would
 * otherwise find it and serve the app again.
 */
export async function editApp<Result>(
  registry: Registry,
  appId: string,
  change: Change<Result>,
  options: RegistryEditOptions & { readonly adding?: boolean },
): Promise<EditOutcome<Result>> {
  const search = shardsToSearch(registry.manifest, appId);
  const [home = 0] = search;
  if (search.length === 1) {
    return editKeys(registry.shard(home).store, change, editOptions(registry, home, options));
  }
  const snapshots = await registry.readShards(search);
  const holders = search.filter((index) => {
    const snapshot = snapshots.get(index);
    return snapshot !== undefined && documentOfShard(registry, index, snapshot, true).has(appId);
  });
  const target = options.adding === true ? home : (holders[0] ?? home);
  const seen = { removed: false };
  const tracked: Change<Result> = (document, context) => {
    const outcome = change(document, context);
    seen.removed = document.has(appId) && !(outcome.next ?? document).has(appId);
    return outcome;
  };
  if (options.adding === true && holders.length > 0) {
    // Already somewhere readers look: the add refuses as it would in its home ("app already exists").
    const holder = holders[0] ?? home;
    return editKeys(
      registry.shard(holder).store,
      change,
      editOptions(registry, holder, options, snapshots.get(holder)),
    );
  }
  const outcome = await editKeys(
    registry.shard(target).store,
    tracked,
    editOptions(registry, target, options, snapshots.get(target)),
  );
  const warnings = [...outcome.warnings];
  let unusedVersions = outcome.unusedVersions;
  if (seen.removed) {
    for (const index of holders.filter((holder) => holder !== target)) {
      const leftover = await editKeys(
        registry.shard(index).store,
        removeLeftoverChange(appId),
        editOptions(registry, index, options, snapshots.get(index)),
      );
      warnings.push(...leftover.warnings);
      unusedVersions += leftover.unusedVersions;
    }
  }
  return { ...outcome, warnings, unusedVersions };
}

/**
 * `prune` without an app: each shard with expired keys gets one write. An app whose every key had expired is
 * removed, and so is any copy of it a reshard left in a shard searched after it.
 */
export async function pruneRegistry(
  registry: Registry,
  change: Change<PruneResult>,
  options: RegistryEditOptions,
): Promise<EditOutcome<PruneResult>> {
  if (!registry.sharded) {
    return editKeys(registry.shard(0).store, change, editOptions(registry, 0, options));
  }
  const { snapshots, documents } = await readAllDocuments(registry);
  const served = new Map(placeApps(registry.manifest, documents).apps.map((app) => [app.appId, app.served]));
  const results: PruneResult[] = [];
  const warnings: string[] = [];
  let unusedVersions = 0;
  let attempts = 1;
  let wrote = false;
  const leftovers: { readonly appId: string; readonly index: number }[] = [];
  for (const [index, snapshot] of snapshots) {
    const outcome = await editKeys(
      registry.shard(index).store,
      change,
      editOptions(registry, index, options, snapshot),
    );
    // What the operator is told of: the copies readers use; a leftover of a move is pruned quietly.
    const isServed = (appId: string): boolean => served.get(appId) === index;
    results.push({
      ...outcome.result,
      removed: outcome.result.removed.filter(({ appId }) => isServed(appId)),
      removedApps: outcome.result.removedApps.filter(isServed),
    });
    warnings.push(...outcome.warnings);
    unusedVersions += outcome.unusedVersions;
    attempts = Math.max(attempts, outcome.attempts);
    wrote ||= outcome.wrote;
    // Gone from the copy readers used: a copy searched after it must not take its place.
    for (const appId of outcome.result.removedApps.filter(isServed)) {
      const later = shardsToSearch(registry.manifest, appId).filter(
        (other) => other !== index && documents.get(other)?.has(appId) === true,
      );
      leftovers.push(...later.map((other) => ({ appId, index: other })));
    }
  }
  for (const { appId, index } of leftovers) {
    const leftover = await editKeys(
      registry.shard(index).store,
      removeLeftoverChange(appId),
      editOptions(registry, index, options),
    );
    warnings.push(...leftover.warnings);
    unusedVersions += leftover.unusedVersions;
  }
  const removedApps = results.flatMap((result) => result.removedApps).sort(byCodeUnit);
  const removed = results.flatMap((result) => result.removed).sort((a, b) => byCodeUnit(a.appId, b.appId));
  return {
    result: { command: 'prune', removed, removedApps },
    attempts,
    warnings,
    unusedVersions,
    wrote,
  };
}
