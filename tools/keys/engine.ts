import { setTimeout as wait } from 'node:timers/promises';
import {
  parseKeyDocument,
  serializeKeyDocument,
  type DocumentApp,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { shardSlots, shardsToSearch } from '../../shared/keys/registry';
import { secretSize, type SecretSize } from '../../shared/keys/secret-size';
import { KeyStoreError, type Snapshot } from './key-store';
import { shardLabel, type Registry } from './registry-access';
import { groupBy } from './placement';
import { checkSecretSize } from './size-guard';
import { budgetRefusal } from './write-budget';

/**
 * The key CLI's one change engine. Every command is a plan of edits of apps: a single command is a plan of one, an
 * apply file a plan of many, a reshard a plan of copies and removals. The engine
 *
 * - routes each edit to its shard: where readers find the app (the first of shardsToSearch that holds it), else its
 *   home; an edit may name its shard instead (a reshard's copy or removal);
 * - removes leftovers: an edit that removes its app from the copy readers use also removes the copies a reshard left
 *   in the shards searched after it, which readers would otherwise find and serve;
 * - checks the whole plan against the shards as read before anything is written: each edit, each shard's size and,
 *   when asked, each shard's version budget;
 * - writes each shard once, compare-and-swap, its edits applied again to a fresh read after a conflict;
 * - reports by shard, as each shard is written.
 *
 * An edit sees only its own app (a document holding that app, or nothing), so a plan costs the same per edit however
 * large its shard is, and an edit cannot touch another app.
 */

export interface ChangeContext {
  /** True after a conflict: the document is someone else's newer version, or holds our own earlier write. */
  readonly isRetry: boolean;
}

/**
 * A pure edit of a key document. `next: undefined` means the document is already as wanted (after a conflict, our
 * own write may have landed), so nothing is written. Throws KeyDocumentError for bad input.
 */
export type Change<Result> = (
  document: KeyDocument,
  context: ChangeContext,
) => { readonly next: KeyDocument | undefined; readonly result: Result };

/** One app's change. `shard`: the shard it is made in, whatever readers find; absent: routed as above. */
export interface AppEdit<Result> {
  readonly appId: string;
  readonly change: Change<Result>;
  readonly shard?: number;
}

/** How a shard write retries after a conflict; tests make it quick. */
export interface RetryOptions {
  /** Default 8. */
  readonly maxAttempts?: number;
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
}

export const DEFAULT_MAX_ATTEMPTS = 8;

/** What one shard gets: its edits in plan order, then the leftover copies it loses. */
export interface ShardPlan {
  readonly index: number;
  readonly snapshot: Snapshot;
  /** Positions in the plan's edits. */
  readonly edits: readonly number[];
  readonly leftovers: readonly string[];
  /** The shard's size once every edit is made, as checked (its text is made again when it is written). */
  readonly size: SecretSize;
}

/** Something that refuses the plan, found before anything was written: one edit's, or one shard's. */
export type PlanProblem =
  { readonly edit: number; readonly error: unknown } | { readonly shard: number; readonly error: unknown };

export interface Plan<Result> {
  /** Each let go (undefined) once its shard is written, when the write is told to `release`. */
  readonly edits: (AppEdit<Result> | undefined)[];
  /** Shards written, ascending. */
  readonly shards: readonly ShardPlan[];
  /** In the order found: edits in plan order, then shards. */
  readonly problems: readonly PlanProblem[];
  /** Shards the plan would take past 80% full, one line each: given before anything is written. */
  readonly warnings: readonly string[];
  /** Every shard read, as read. */
  readonly documents: ReadonlyMap<number, KeyDocument>;
}

export interface PlanOptions {
  /** A shard with nothing stored yet (a key file not yet made) is an empty document. */
  readonly createIfMissing: boolean;
  /** Refuse a shard whose version quota has no room for its write (stores that have one). */
  readonly checkBudget: boolean;
}

/** A problem of one shard's document (it does not parse, or would not fit), named by its shard. */
export class ShardError extends Error {
  override readonly name = 'ShardError';
  constructor(
    readonly label: string,
    readonly error: Error,
  ) {
    super(`${label}: ${error.message}`);
  }
}

/** An error named by its shard in a registry of several (a store's own errors already name it). */
function labelled(registry: Registry, index: number, error: unknown): unknown {
  if (!registry.sharded || !(error instanceof Error) || error instanceof KeyStoreError) return error;
  return new ShardError(shardLabel(registry, index), error);
}

/** A shard's document as read; a store with nothing in it is empty when `createIfMissing`. */
function documentOfShard(
  registry: Registry,
  index: number,
  snapshot: Snapshot,
  createIfMissing: boolean,
): KeyDocument {
  if (snapshot.text === undefined) {
    if (createIfMissing) return new Map();
    throw new KeyStoreError(`${registry.shard(index).store.description} does not exist (add-app creates it)`);
  }
  try {
    return parseKeyDocument(snapshot.text);
  } catch (error) {
    throw labelled(registry, index, error);
  }
}

/** The shards a plan reads, as read, and (when it checks budgets) those with no room for one more version. */
export interface ShardsRead {
  readonly snapshots: ReadonlyMap<number, Snapshot>;
  readonly documents: ReadonlyMap<number, KeyDocument>;
  readonly budget: readonly PlanProblem[];
}

/** Every shard's document, read in as few calls as the registry allows; no budget is checked. */
export async function readAllDocuments(registry: Registry, createIfMissing = false): Promise<ShardsRead> {
  const indices = Array.from({ length: shardSlots(registry.manifest) }, (_, index) => index);
  return { ...(await readDocuments(registry, indices, createIfMissing)), budget: [] };
}

/** Makes `edit` in `working` (the shard's document, changed in place); what it returned, and whether it removed its app. */
function applyEdit<Result>(
  working: Map<string, DocumentApp>,
  edit: AppEdit<Result>,
  context: ChangeContext,
): { readonly result: Result; readonly removed: boolean } {
  const entry = working.get(edit.appId);
  const own: KeyDocument = entry === undefined ? new Map() : new Map([[edit.appId, entry]]);
  const { next, result } = edit.change(own, context);
  const after = next?.get(edit.appId);
  if (next !== undefined) {
    if (after === undefined) working.delete(edit.appId);
    else working.set(edit.appId, after);
  }
  return { result, removed: entry !== undefined && next !== undefined && after === undefined };
}

/**
 * What each of a shard's edits returns against the shard as read, in the order of `shard.edits` (what a dry run
 * reports). Made again here rather than kept in the plan, which holds no per-edit results.
 */
export function resultsAsRead<Result>(plan: Plan<Result>, shard: ShardPlan): (Result | undefined)[] {
  const working = new Map(plan.documents.get(shard.index));
  return shard.edits.map((position) => {
    const edit = plan.edits[position];
    return edit === undefined ? undefined : applyEdit(working, edit, { isRetry: false }).result;
  });
}

/** A shard's document once its edits and then its leftovers are made (writeShard finds when nothing changed). */
function shardChange<Result>(
  edits: readonly AppEdit<Result>[],
  leftovers: readonly string[],
): Change<readonly Result[]> {
  return (document, context) => {
    const working = new Map(document);
    const results = edits.map((edit) => applyEdit(working, edit, context).result);
    for (const appId of leftovers) working.delete(appId);
    return { next: working, result: results };
  };
}

/** The given shards, as read, in as few calls as the registry allows. */
export async function readDocuments(
  registry: Registry,
  indices: readonly number[],
  createIfMissing: boolean,
): Promise<Omit<ShardsRead, 'budget'>> {
  const fresh = indices.length === 0 ? new Map<number, Snapshot>() : await registry.readShards(indices);
  const snapshots = new Map<number, Snapshot>();
  const documents = new Map<number, KeyDocument>();
  for (const index of indices) {
    const snapshot = fresh.get(index) ?? { text: undefined, version: 'absent' };
    snapshots.set(index, snapshot);
    documents.set(index, documentOfShard(registry, index, snapshot, createIfMissing));
  }
  return { snapshots, documents };
}

/**
 * One shard's edits made on a copy of its document, which is returned; the leftovers they leave in other shards,
 * and their problems, go to `found`. `copiesOf`: by position, the other shards that hold a routed edit's app (where
 * it has a second copy).
 */
function makeShardEdits<Result>(
  document: KeyDocument | undefined,
  positions: readonly number[],
  edits: readonly AppEdit<Result>[],
  copiesOf: ReadonlyMap<number, readonly number[]>,
  found: { readonly problems: PlanProblem[]; readonly leftovers: [number, string][] },
): Map<string, DocumentApp> {
  const working = new Map(document);
  for (const position of positions) {
    const edit = edits[position];
    if (edit === undefined) continue;
    try {
      const { removed } = applyEdit(working, edit, { isRetry: false });
      if (removed)
        for (const other of copiesOf.get(position) ?? []) found.leftovers.push([other, edit.appId]);
    } catch (error) {
      found.problems.push({ edit: position, error });
    }
  }
  return working;
}

/** Measures one shard as it would be written: too large is a problem, past 80% a warning. Keeps no text. */
function measureShard(
  registry: Registry,
  shard: Omit<ShardPlan, 'size'>,
  working: Map<string, DocumentApp>,
  found: { readonly problems: PlanProblem[]; readonly warnings: string[] },
): ShardPlan {
  for (const appId of shard.leftovers) working.delete(appId);
  const text = serializeKeyDocument(working);
  try {
    const warning = sizeCheck(registry, shard.index, text, 'will take');
    if (warning !== undefined) found.warnings.push(warning);
  } catch (error) {
    found.problems.push({ shard: shard.index, error });
  }
  return { ...shard, size: secretSize(text) };
}

/** The shards an edit looks in: those readers search for its app, or the one it names. */
function searchOf(registry: Registry, edit: Pick<AppEdit<unknown>, 'appId' | 'shard'>): readonly number[] {
  return edit.shard === undefined ? shardsToSearch(registry.manifest, edit.appId) : [edit.shard];
}

/**
 * Reads every shard the edits of these apps look in, and lists their versions when asked, at once. A caller may
 * start this before it makes the edits themselves (apply's 100,000 new keys take a while), so the round trips
 * overlap that work.
 */
export async function readShardsFor(
  registry: Registry,
  apps: readonly Pick<AppEdit<unknown>, 'appId' | 'shard'>[],
  options: PlanOptions,
): Promise<ShardsRead> {
  const wanted = new Set<number>();
  for (const app of apps) for (const index of searchOf(registry, app)) wanted.add(index);
  const indices = [...wanted].sort((a, b) => a - b);
  const budget = options.checkBudget
    ? budgetProblems(
        registry,
        indices.map((index) => [index, 1]),
      )
    : Promise.resolve([]);
  // Awaited below; a read that fails first must not leave its failure unhandled.
  budget.catch(() => undefined);
  const { snapshots, documents } = await readDocuments(registry, indices, options.createIfMissing);
  return { snapshots, documents, budget: await budget };
}

/**
 * Routes, makes and checks every edit against the shards as read; writes nothing. Linear in the number of edits,
 * and each shard's edited document is measured and let go at once (only a shard that may lose a leftover copy waits
 * for the others' edits), so a plan of 100,000 edits holds no shard's text. `read`: the shards these edits look
 * in, already read (readShardsFor started early, or every shard); else they are read here.
 */
export async function planEdits<Result>(
  registry: Registry,
  edits: readonly AppEdit<Result>[],
  options: PlanOptions,
  read?: ShardsRead,
): Promise<Plan<Result>> {
  const { snapshots, documents, budget } = read ?? (await readShardsFor(registry, edits, options));
  // Each edit goes to the first shard searched that holds its app, else its first; only a shard holding a second
  // copy of a routed edit's app can lose a leftover.
  const copiesOf = new Map<number, readonly number[]>();
  const groups = groupBy(
    edits.map((edit, position) => {
      const search = searchOf(registry, edit);
      const holding = search.filter((index) => documents.get(index)?.has(edit.appId) === true);
      const [first = search[0] ?? 0, ...others] = holding;
      if (edit.shard === undefined && others.length > 0) copiesOf.set(position, others);
      return [first, position] as const;
    }),
  );
  const mayLose = new Set([...copiesOf.values()].flat());
  const made = { problems: [] as PlanProblem[], leftovers: [] as [number, string][] };
  const found = { problems: [] as PlanProblem[], warnings: [] as string[] };
  const waiting = new Map<number, Map<string, DocumentApp>>();
  const shards = new Map<number, ShardPlan>();
  const measure = (index: number, working: Map<string, DocumentApp>, leftovers: readonly string[]) => {
    const snapshot = snapshots.get(index) ?? { text: undefined, version: 'absent' };
    const shard = { index, snapshot, edits: groups.get(index) ?? [], leftovers };
    shards.set(index, measureShard(registry, shard, working, found));
  };
  for (const [index, positions] of groups) {
    const working = makeShardEdits(documents.get(index), positions, edits, copiesOf, made);
    if (mayLose.has(index)) waiting.set(index, working);
    else measure(index, working, []);
  }
  const leftoversOf = groupBy(made.leftovers);
  for (const index of new Set([...waiting.keys(), ...leftoversOf.keys()])) {
    measure(index, waiting.get(index) ?? new Map(documents.get(index)), leftoversOf.get(index) ?? []);
  }
  const ordered = [...shards.values()].sort((a, b) => a.index - b.index);
  // Versions are listed for every shard read; only those written can run out.
  const full = budget.filter((problem) => 'shard' in problem && shards.has(problem.shard));
  return {
    edits: [...edits],
    shards: ordered,
    problems: [...made.problems, ...found.problems.sort(byShardOfProblem), ...full],
    warnings: found.warnings,
    documents,
  };
}

const byShardOfProblem = (a: PlanProblem, b: PlanProblem) =>
  ('shard' in a ? a.shard : 0) - ('shard' in b ? b.shard : 0);

/** Shards whose version quota has no room for `writes` more versions, each with its one line. */
export async function budgetProblems(
  registry: Registry,
  writes: readonly (readonly [number, number])[],
): Promise<PlanProblem[]> {
  const problems: PlanProblem[] = [];
  // Reads, not writes: several at once, so 256 shards are listed in a few round trips rather than 256.
  await inTurn(writes, BUDGET_READS_AT_ONCE, async ([index, count]) => {
    const budget = await registry.shard(index).store.writeBudget?.(count);
    if (budget?.verdict === 'refuse') {
      const error = new KeyStoreError(budgetRefusal(shardLabel(registry, index), budget));
      problems.push({ shard: index, error });
    }
    return undefined;
  });
  return problems.sort(byShardOfProblem);
}

/** Runs `task` on each item, `width` at a time, started in order; none is started once one has said 'stop'. */
async function inTurn<Item>(
  items: readonly Item[],
  width: number,
  task: (item: Item) => Promise<'stop' | undefined>,
): Promise<'stop' | undefined> {
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let item = items[next++]; item !== undefined; item = items[next++]) {
      if ((await task(item)) === 'stop') next = Infinity;
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return next === Infinity ? 'stop' : undefined;
}

/** Version listings made at once while checking a plan's write budget. */
export const BUDGET_READS_AT_ONCE = 16;

/** A shard as written: what its edits returned, as they were made in the write that landed. */
export type ShardWrite<Result> =
  | {
      readonly index: number;
      readonly status: 'written' | 'unchanged';
      readonly results: readonly Result[];
      /** How many times the edits were made on a fresh read: 1 when nobody else wrote meanwhile. */
      readonly attempts: number;
      /** The store's own, and the size guard's when the shard is nearly full. */
      readonly warnings: readonly string[];
      /** Versions made by attempts that lost a race: unused, counted toward the version quota for 24 hours. */
      readonly unusedVersions: number;
    }
  | { readonly index: number; readonly status: 'failed'; readonly error: unknown };

export interface WriteOptions<Result> {
  readonly createIfMissing: boolean;
  readonly concurrency: number;
  readonly retry?: RetryOptions;
  /**
   * Called as each shard is done, in the order they finish; no further shard is started before it returns, and none
   * at all once it says 'stop' (the keys of a written shard could not be handed out).
   */
  readonly onShard?: (
    write: ShardWrite<Result>,
    shard: ShardPlan,
  ) => Promise<'stop' | undefined> | 'stop' | undefined;
  /**
   * Let go of each shard's edits (their new keys) and results once `onShard` has returned: the answer then holds no
   * results, and a plan of 100,000 new keys does not keep them all until the last shard is written.
   */
  readonly release?: boolean;
}

/** `, leaving 2 unused versions of secret x (...)`, or nothing when the lost races made none. */
export function unusedVersionsText(unusedVersions: number, description: string): string {
  if (unusedVersions === 0) return '';
  const left =
    unusedVersions === 1
      ? 'the lost race left 1 unused version'
      : `the lost races left ${unusedVersions} unused versions`;
  return ` (${left} of ${description}, counted toward its version quota for 24 hours)`;
}

/** What the writes that landed add up to: the shards written, their warnings, the most attempts one took, and the
 * versions lost races left. */
export function tallyWrites(writes: readonly ShardWrite<unknown>[]) {
  const done = writes.flatMap((write) => (write.status === 'failed' ? [] : [write]));
  return {
    written: done.filter((write) => write.status === 'written').length,
    warnings: done.flatMap((write) => write.warnings),
    attempts: Math.max(1, ...done.map((write) => write.attempts)),
    unusedVersions: done.reduce((sum, write) => sum + write.unusedVersions, 0),
  };
}

/** Every attempt lost a race with another writer. Nothing of ours was stored. */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
  constructor(
    readonly attempts: number,
    readonly unusedVersions = 0,
    description = '',
  ) {
    super(
      `the keys changed under us ${attempts} time${attempts === 1 ? '' : 's'}; nothing was lost, re-run the command` +
        unusedVersionsText(unusedVersions, description),
    );
  }
}

/** Full jitter over an exponential ceiling (100 ms, 200 ms, … up to 1.6 s) spreads competing writers apart. */
export function backoffMs(attempt: number, random: () => number): number {
  return Math.round(random() * Math.min(1_600, 100 * 2 ** (attempt - 1)));
}

/** The text to write, or undefined when the change leaves the document as it was. */
function changedText(document: KeyDocument, next: KeyDocument | undefined): string | undefined {
  if (next === undefined) return undefined;
  const text = serializeKeyDocument(next);
  return text === serializeKeyDocument(document) ? undefined : text;
}

/**
 * Read → change → measure → compare-and-swap, again on a conflict: re-read, make the same change (the same fresh
 * keys, so the keys a command hands out are the keys it stored), up to `maxAttempts` times. A shard that would not
 * fit in a secret is refused before anything is written (SecretTooLargeError).
 */
export async function writeShard<Result>(
  registry: Registry,
  index: number,
  change: Change<Result>,
  options: {
    readonly createIfMissing: boolean;
    readonly firstRead?: Snapshot;
    readonly retry?: RetryOptions;
  },
): Promise<Extract<ShardWrite<Result>, { status: 'written' | 'unchanged' }> & { readonly result: Result }> {
  const { store } = registry.shard(index);
  const { maxAttempts = DEFAULT_MAX_ATTEMPTS, sleep = wait, random = Math.random } = options.retry ?? {};
  const warnings: string[] = [];
  let unusedVersions = 0;
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    // The plan warned of the document it read; a document read again after a conflict is measured afresh.
    const planned = attempt === 1 ? options.firstRead : undefined;
    const snapshot = planned ?? (await store.read());
    const document = documentOfShard(registry, index, snapshot, options.createIfMissing);
    const { next, result } = change(document, { isRetry: attempt > 1 });
    const text = changedText(document, next);
    const done = { index, result, results: [], attempts: attempt, warnings, unusedVersions };
    if (text === undefined) return { ...done, status: 'unchanged' };
    const sizeWarning = sizeCheck(registry, index, text, 'now take');
    const outcome = await store.replace(snapshot.version, text);
    warnings.push(...outcome.warnings);
    if (outcome.status === 'replaced') {
      if (sizeWarning !== undefined && planned === undefined) warnings.push(sizeWarning);
      return { ...done, status: 'written' };
    }
    unusedVersions += outcome.unusedVersions ?? 0;
    if (attempt < maxAttempts) await sleep(backoffMs(attempt, random));
  }
  throw new ConflictError(maxAttempts, unusedVersions, store.description);
}

/** checkSecretSize, named by its shard in a registry of several. */
function sizeCheck(
  registry: Registry,
  index: number,
  text: string,
  verb: 'will take' | 'now take',
): string | undefined {
  try {
    const warning = checkSecretSize(text, verb);
    return warning === undefined || !registry.sharded
      ? warning
      : `${shardLabel(registry, index)}: ${warning}`;
  } catch (error) {
    throw labelled(registry, index, error);
  }
}

/**
 * Writes each shard of the plan, `concurrency` at a time: shards that only lose leftovers first, then the others,
 * lowest index first. The answer is in the plan's order. A shard that fails does not stop the
 * others; `onShard` hears of each as it is done, and may stop the rest. Shards not started are absent from the answer.
 */
export async function writePlan<Result>(
  registry: Registry,
  plan: Pick<Plan<Result>, 'edits' | 'shards'>,
  options: WriteOptions<Result>,
): Promise<ShardWrite<Result>[]> {
  const writes: (ShardWrite<Result> | undefined)[] = plan.shards.map(() => undefined);
  // Leftovers first: until the copy readers use is edited, they never meet a leftover's older entry.
  const order = plan.shards
    .map((shard, position) => ({ position, rank: shard.edits.length === 0 ? 0 : 1 }))
    .sort((a, b) => a.rank - b.rank || a.position - b.position)
    .map(({ position }) => position);
  const writeAt = async (position: number): Promise<'stop' | undefined> => {
    const shard = plan.shards[position];
    if (shard === undefined) return undefined;
    const edits = shard.edits.flatMap((edit) => plan.edits[edit] ?? []);
    let write: ShardWrite<Result>;
    try {
      const { result, ...written } = await writeShard(
        registry,
        shard.index,
        shardChange(edits, shard.leftovers),
        { createIfMissing: options.createIfMissing, firstRead: shard.snapshot, retry: options.retry },
      );
      write = { ...written, results: result };
    } catch (error) {
      write = { index: shard.index, status: 'failed', error };
    }
    writes[position] = write;
    const verdict = await options.onShard?.(write, shard);
    if (options.release === true) {
      for (const edit of shard.edits) plan.edits[edit] = undefined;
      if (write.status !== 'failed') writes[position] = { ...write, results: [] };
    }
    return verdict;
  };
  // The first shard goes alone: it is done after one write's round trips rather than after `concurrency` writes
  // sharing the service, so apply's first line comes early.
  if ((await inTurn(order.slice(0, 1), 1, writeAt)) !== 'stop') {
    await inTurn(order.slice(1), options.concurrency, writeAt);
  }
  return writes.flatMap((write) => write ?? []);
}

/**
 * A command of a few edits (one app's edit, prune, a step of a reshard): planned, refused on its first problem (thrown
 * as found), its warnings given to `warn` before anything is written, then written one shard at a time; a shard
 * that failed is thrown once every shard has been tried.
 */
export async function planAndWrite<Result>(
  registry: Registry,
  edits: readonly AppEdit<Result>[],
  options: Pick<WriteOptions<Result>, 'createIfMissing' | 'retry' | 'onShard'> & {
    readonly warn: (warning: string) => void;
  },
): Promise<{
  readonly writes: ShardWrite<Result>[];
  /** What each edit returned, by its position in `edits`; absent where its shard was not written. */
  readonly results: (Result | undefined)[];
}> {
  const { createIfMissing, warn, onShard, ...write } = options;
  const plan = await planEdits(registry, edits, { createIfMissing, checkBudget: false });
  const [problem] = plan.problems;
  if (problem !== undefined) throw problem.error;
  plan.warnings.forEach(warn);
  const results: (Result | undefined)[] = [];
  const writes = await writePlan(registry, plan, {
    createIfMissing,
    concurrency: 1,
    ...write,
    onShard: (done, shard) => {
      if (done.status !== 'failed') shard.edits.forEach((edit, at) => (results[edit] = done.results[at]));
      return onShard?.(done, shard);
    },
  });
  // Every shard is tried; then the first that failed, in the plan's order, fails the command.
  const failed = writes.find((done) => done.status === 'failed');
  if (failed?.status === 'failed') throw failed.error;
  return { writes, results };
}
