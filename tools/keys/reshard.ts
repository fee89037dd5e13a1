import { withApp, type KeyDocument } from '../../shared/keys/key-document';
import type { RegistryManifest } from '../../shared/keys/registry';
import { editKeys, type EditOptions } from './edit';
import { byShard, planReshard, sameEntry, type Leftover, type Move, type ReshardPlan } from './placement';
import { shardLabel, type Registry } from './registry';
import { readAllDocuments } from './registry-edit';
import { budgetRefusal } from './write-budget';
import { WriteBudgetError } from './key-store';

/**
 * `reshard`: moves every app that is not in its home under the manifest's `shards`, without a moment when readers
 * (who look in the new home first, then in the old one) miss it:
 *
 * 1. copy: each app not yet at home is copied there, one compare-and-swap write per target shard;
 * 2. settle: wait until every reader's cache holds the copies (the key cache TTL plus a margin);
 * 3. remove: the old copies go, one write per source shard. A copy edited in its old home while it was being
 *    moved is carried over first; one that cannot be told apart is left, and said.
 *
 * Everything is computed from what is read, so a reshard stopped anywhere is finished by running it again.
 */

/** Added to the key cache TTL: a refresh under way when the copy landed, and clocks that differ. */
export const SETTLE_MARGIN_MS = 30_000;

/** The Lambda's default key cache TTL, for a manifest that names none. */
export const DEFAULT_KEY_CACHE_TTL_SECONDS = 60;

export function settleMsOf(manifest: RegistryManifest, settleMs: number | undefined): number {
  return (
    settleMs ?? (manifest.keyCacheTtlSeconds ?? DEFAULT_KEY_CACHE_TTL_SECONDS) * 1_000 + SETTLE_MARGIN_MS
  );
}

export interface ReshardOptions {
  readonly settleMs?: number;
  readonly dryRun: boolean;
  readonly sleep: (ms: number) => Promise<void>;
  /** Progress, one line at a time, as it happens. */
  readonly progress: (line: string) => void;
  readonly editOptions: Omit<EditOptions, 'firstRead' | 'shardLabel' | 'createIfMissing'>;
}

export interface ReshardReport {
  readonly shards: number;
  readonly previousShards?: number;
  /** Apps copied to their home, by source → target. */
  readonly copied: readonly Move[];
  /** Old copies removed. */
  readonly removed: readonly Leftover[];
  /** Apps edited in their old home while being moved, whose change was carried to the new home. */
  readonly carried: readonly string[];
  /** Copies left in place: changed in both homes during the move. */
  readonly kept: readonly Leftover[];
  readonly writes: number;
  /** What is left to do, read after the run (for a dry run: what a run would do). */
  readonly left: ReshardPlan;
  readonly settledMs: number;
  readonly warnings: readonly string[];
  readonly unusedVersions: number;
}

function copyChange(moves: readonly Move[], copied: Set<string>) {
  return (document: KeyDocument) => {
    copied.clear();
    let next = document;
    for (const move of moves) {
      if (next.has(move.appId)) continue;
      next = withApp(next, move.appId, move.entry);
      copied.add(move.appId);
    }
    return { next: copied.size === 0 ? undefined : next, result: undefined };
  };
}

export async function reshard(registry: Registry, options: ReshardOptions): Promise<ReshardReport> {
  const layout = registry.manifest;
  const { documents } = await readAllDocuments(registry, registry.kind === 'files');
  const plan = planReshard(layout, documents);
  const base = {
    shards: layout.shards,
    ...(layout.previousShards === undefined ? {} : { previousShards: layout.previousShards }),
  };
  if (options.dryRun || (plan.moves.length === 0 && plan.leftovers.length === 0)) {
    return {
      ...base,
      copied: [],
      removed: [],
      carried: [],
      kept: [],
      writes: 0,
      left: plan,
      settledMs: 0,
      warnings: [],
      unusedVersions: 0,
    };
  }

  const targets = byShard(plan.moves, (move) => move.to);
  const sources = byShard(plan.leftovers, (leftover) => leftover.from);
  for (const index of new Set([...targets.keys(), ...sources.keys()])) {
    const budget = await registry
      .shard(index)
      .store.writeBudget?.(targets.has(index) && sources.has(index) ? 2 : 1);
    if (budget?.verdict === 'refuse')
      throw new WriteBudgetError(budgetRefusal(shardLabel(registry, index), budget));
  }

  const warnings: string[] = [];
  let unusedVersions = 0;
  let writes = 0;
  const edit = async (index: number, change: Parameters<typeof editKeys>[1]) => {
    const outcome = await editKeys(registry.shard(index).store, change, {
      ...options.editOptions,
      createIfMissing: registry.kind === 'files',
      ...(registry.sharded ? { shardLabel: shardLabel(registry, index) } : {}),
    });
    warnings.push(...outcome.warnings);
    unusedVersions += outcome.unusedVersions;
    if (outcome.wrote) writes++;
  };

  // 1. Copy.
  const copied: Move[] = [];
  for (const [index, moves] of targets) {
    const landed = new Set<string>();
    await edit(index, copyChange(moves, landed));
    copied.push(...moves.filter((move) => landed.has(move.appId)));
    options.progress(
      `${shardLabel(registry, index)}: copied ${landed.size} of ${moves.length} apps to their home`,
    );
  }

  // 2. Settle.
  const settledMs = settleMsOf(layout, options.settleMs);
  if (settledMs > 0) {
    options.progress(
      `waiting ${Math.round(settledMs / 1_000)}s, until every reader's key cache holds the copies, before the old copies go`,
    );
    await options.sleep(settledMs);
  }

  // 3. Carry over edits made in an old home during the copy, then remove the old copies.
  const now = (await readAllDocuments(registry, registry.kind === 'files')).documents;
  const copiedEntry = new Map(copied.map((move) => [move.appId, move.entry]));
  const carry: Move[] = [];
  for (const move of copied) {
    const source = now.get(move.from)?.get(move.appId);
    const target = now.get(move.to)?.get(move.appId);
    if (source !== undefined && !sameEntry(source, move.entry) && sameEntry(target, move.entry)) {
      carry.push({ ...move, entry: source });
    }
  }
  for (const [index, moves] of byShard(carry, (move) => move.to)) {
    await edit(index, (document) => {
      let next = document;
      for (const move of moves) {
        if (sameEntry(document.get(move.appId), copiedEntry.get(move.appId)))
          next = withApp(next, move.appId, move.entry);
      }
      return { next, result: undefined };
    });
  }
  const carriedEntry = new Map(carry.map((move) => [move.appId, move.entry]));
  const removed: Leftover[] = [];
  const kept: Leftover[] = [];
  for (const [index, leftovers] of sources) {
    let removedHere: Leftover[] = [];
    let keptHere: Leftover[] = [];
    await edit(index, (document) => {
      removedHere = [];
      keptHere = [];
      let next = document;
      for (const leftover of leftovers) {
        const entry = document.get(leftover.appId);
        if (entry === undefined) continue;
        const moved = copiedEntry.get(leftover.appId);
        // Copied in this run: it goes only if unchanged since (or carried over). A copy from an earlier run goes:
        // the new home, which readers use, holds the app.
        if (
          moved !== undefined &&
          !sameEntry(entry, moved) &&
          !sameEntry(entry, carriedEntry.get(leftover.appId))
        ) {
          keptHere.push(leftover);
          continue;
        }
        next = withApp(next, leftover.appId, undefined);
        removedHere.push(leftover);
      }
      return { next, result: undefined };
    });
    removed.push(...removedHere);
    kept.push(...keptHere);
    options.progress(`${shardLabel(registry, index)}: removed ${removedHere.length} old copies`);
  }

  const left = planReshard(layout, (await readAllDocuments(registry, registry.kind === 'files')).documents);
  return {
    ...base,
    copied,
    removed,
    carried: carry.map((move) => move.appId),
    kept,
    writes,
    left,
    settledMs,
    warnings,
    unusedVersions,
  };
}
