import type { DocumentApp } from '../../shared/keys/key-document';
import type { RegistryManifest } from '../../shared/keys/registry';
import {
  budgetProblems,
  planAndWrite,
  readAllDocuments,
  tallyWrites,
  type AppEdit,
  type Change,
  type RetryOptions,
  type ShardWrite,
} from './engine';
import { byShard, planReshard, sameEntry, type Leftover, type Move, type ReshardPlan } from './placement';
import { shardLabel, type Registry } from './registry-access';
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
  /** On a terminal: the settle's time left, rewritten in place each second. */
  readonly countdown?: (text: string) => void;
  readonly retry?: RetryOptions;
}

export interface ReshardReport {
  readonly shards: number;
  readonly previousShards?: number;
  /** Apps copied to their home, by source → target. */
  readonly copied: readonly Move[];
  readonly removed: readonly Leftover[];
  /** Apps edited in their old home while being moved, whose change was carried to the new home. */
  readonly carried: readonly string[];
  /** Copies left in place: changed in both homes during the move. */
  readonly kept: readonly Leftover[];
  readonly writes: number;
  /** What is left to do, read after the run (for a dry run: what a run would do). */
  readonly left: ReshardPlan;
  readonly warnings: readonly string[];
}

/** Sets the app to `entry` where it is absent (a copy) or still `unless` (a carried edit); says whether it did. */
function putChange(appId: string, entry: DocumentApp, unless?: DocumentApp): Change<boolean> {
  return (document) => {
    const current = document.get(appId);
    const wanted = unless === undefined ? current === undefined : sameEntry(current, unless);
    return wanted ? { next: new Map([[appId, entry]]), result: true } : { next: undefined, result: false };
  };
}

/**
 * Removes an old copy, unless it changed since it was copied in this run (and was not carried over): that copy is
 * kept, and said. A copy from an earlier run goes: the new home, which readers use, holds the app.
 */
function removeChange(
  appId: string,
  copied: DocumentApp | undefined,
  carried: DocumentApp | undefined,
): Change<'removed' | 'kept' | 'absent'> {
  return (document) => {
    const entry = document.get(appId);
    if (entry === undefined) return { next: undefined, result: 'absent' };
    if (copied !== undefined && !sameEntry(entry, copied) && !sameEntry(entry, carried)) {
      return { next: undefined, result: 'kept' };
    }
    return { next: new Map(), result: 'removed' };
  };
}

/** One step of the reshard: its edits, each pinned to its shard, one write per shard, in turn. */
async function runPhase<Result>(
  registry: Registry,
  edits: readonly AppEdit<Result>[],
  options: ReshardOptions,
  progress: (index: number, results: readonly Result[]) => string,
): Promise<{ writes: readonly ShardWrite<Result>[]; results: (Result | undefined)[]; warnings: string[] }> {
  const warnings: string[] = [];
  const { writes, results } = await planAndWrite(registry, edits, {
    createIfMissing: registry.kind === 'files',
    retry: options.retry,
    warn: (warning) => warnings.push(warning),
    onShard: (write) => {
      if (write.status === 'failed') throw write.error;
      const line = progress(write.index, write.results);
      if (line !== '') options.progress(line);
      return undefined;
    },
  });
  return { writes, results, warnings };
}

/** Waits `ms`; on a terminal, says each second how long is left. */
async function settle(ms: number, options: ReshardOptions): Promise<void> {
  const { countdown } = options;
  if (countdown === undefined) return options.sleep(ms);
  for (let left = ms; left > 0; left -= 1_000) {
    countdown(`\r${Math.ceil(left / 1_000)}s left \x1b[K`);
    await options.sleep(Math.min(1_000, left));
  }
  countdown('\r\x1b[K');
}

export async function reshard(registry: Registry, options: ReshardOptions): Promise<ReshardReport> {
  const layout = registry.manifest;
  const readPlan = async () =>
    planReshard(layout, (await readAllDocuments(registry, registry.kind === 'files')).documents);
  const plan = await readPlan();
  const base = { shards: layout.shards, previousShards: layout.previousShards };
  if (options.dryRun || (plan.moves.length === 0 && plan.leftovers.length === 0)) {
    return { ...base, copied: [], removed: [], carried: [], kept: [], writes: 0, left: plan, warnings: [] };
  }

  const targets = byShard(plan.moves, (move) => move.to);
  const sources = byShard(plan.leftovers, (leftover) => leftover.from);
  const writesOf = [...new Set([...targets.keys(), ...sources.keys()])].map(
    (index) => [index, targets.has(index) && sources.has(index) ? 2 : 1] as const,
  );
  const [refused] = await budgetProblems(registry, writesOf);
  if (refused !== undefined) throw refused.error;

  // 1. Copy.
  const moves = [...targets.values()].flat();
  const copy = await runPhase(
    registry,
    moves.map((move) => ({ appId: move.appId, shard: move.to, change: putChange(move.appId, move.entry) })),
    options,
    (index, results) =>
      `${shardLabel(registry, index)}: copied ${results.filter(Boolean).length} of ${results.length} apps to their home`,
  );
  const copied = moves.filter((_, position) => copy.results[position] === true);

  // 2. Settle.
  const settledMs = settleMsOf(layout, options.settleMs);
  if (settledMs > 0) {
    options.progress(
      `waiting ${Math.round(settledMs / 1_000)}s, until every reader's key cache holds the copies, before the old copies go`,
    );
    await settle(settledMs, options);
  }

  // 3. Carry over edits made in an old home during the copy, then remove the old copies.
  const { documents: current } = await readAllDocuments(registry, registry.kind === 'files');
  const carry = copied.flatMap((move) => {
    const source = current.get(move.from)?.get(move.appId);
    const target = current.get(move.to)?.get(move.appId);
    return source !== undefined && !sameEntry(source, move.entry) && sameEntry(target, move.entry)
      ? [{ ...move, entry: source, copiedEntry: move.entry }]
      : [];
  });
  const carried = await runPhase(
    registry,
    carry.map((move) => ({
      appId: move.appId,
      shard: move.to,
      change: putChange(move.appId, move.entry, move.copiedEntry),
    })),
    options,
    () => '',
  );
  const copiedEntry = new Map(copied.map((move) => [move.appId, move.entry]));
  const carriedEntry = new Map(carry.map((move) => [move.appId, move.entry]));
  const leftovers = [...sources.values()].flat();
  const removal = await runPhase(
    registry,
    leftovers.map((leftover) => ({
      appId: leftover.appId,
      shard: leftover.from,
      change: removeChange(leftover.appId, copiedEntry.get(leftover.appId), carriedEntry.get(leftover.appId)),
    })),
    options,
    (index, results) =>
      `${shardLabel(registry, index)}: removed ${results.filter((result) => result === 'removed').length} old copies`,
  );
  const outcome = (wanted: string) => leftovers.filter((_, position) => removal.results[position] === wanted);

  const tally = tallyWrites([...copy.writes, ...carried.writes, ...removal.writes]);
  const left = await readPlan();
  return {
    ...base,
    copied,
    removed: outcome('removed'),
    carried: carry.map((move) => move.appId),
    kept: outcome('kept'),
    writes: tally.written,
    left,
    warnings: [...[copy, carried, removal].flatMap((phase) => phase.warnings), ...tally.warnings],
  };
}
