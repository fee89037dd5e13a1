import { serializeKeyDocument, withApp, type KeyDocument } from '../../shared/keys/key-document';
import { shardsToSearch } from '../../shared/keys/registry';
import { secretSize } from '../../shared/keys/secret-size';
import { formatTimestamp } from '../../shared/keys/timestamp';
import type { ChangeRequest, ExpirySpec } from './change-file';
import {
  freshKey,
  limitChange,
  networkChange,
  newKeyChange,
  removeAppChange,
  revokeChange,
  type EditResult,
  type FreshKey,
} from './commands';
import { editKeys, type Change, type EditOptions } from './edit';
import type { KeySink } from './key-sink';
import type { Snapshot } from './key-store';
import { byShard } from './placement';
import { shardLabel, type Registry } from './registry';
import { documentOfShard } from './registry-edit';
import { checkSecretSize, groupDigits } from './size-guard';
import { budgetRefusal } from './write-budget';

/**
 * `apply`: the changes of an apply file (change-file.ts), grouped by the shard each lands in, each shard's in one
 * compare-and-swap write. Everything is checked against the registry as read before anything is written (an
 * unknown app, an app that exists, a key that is not there, a shard that would not fit or has no version left in
 * its quota): any problem refuses the whole file. Then each shard is written on its own: its changes land
 * together or not at all, and the report says which.
 */

/** `now` plus `ms`, in whole seconds (rounded down), as the single-app commands write expiries. */
function after(now: number, ms: number): number {
  return Math.floor((now + ms) / 1_000) * 1_000;
}

function expiresAt(expiry: ExpirySpec | undefined, now: number): number | undefined {
  if (expiry === undefined) return undefined;
  return expiry.kind === 'in' ? after(now, expiry.ms) : expiry.at;
}

/** One change of the file as an edit of its shard, with the key it creates made once, before any attempt. */
export interface PlannedChange {
  readonly request: ChangeRequest;
  readonly fresh?: FreshKey;
  readonly change: Change<EditResult | undefined>;
}

function composed(changes: readonly Change<EditResult>[]): Change<EditResult | undefined> {
  return (document, context) => {
    let current = document;
    let changed = false;
    let first: EditResult | undefined;
    for (const change of changes) {
      const { next, result } = change(current, context);
      first ??= result;
      if (next !== undefined) {
        current = next;
        changed = true;
      }
    }
    return { next: changed ? current : undefined, result: first };
  };
}

export function planChange(request: ChangeRequest, newKey: () => string, now: number): PlannedChange {
  const { appId } = request;
  switch (request.op) {
    case 'add':
    case 'rotate': {
      const fresh = freshKey(newKey(), request.hash);
      const at = expiresAt(request.expiry, now);
      const othersExpireBy =
        request.op === 'rotate' && request.graceMs !== undefined ? after(now, request.graceMs) : undefined;
      const steps: Change<EditResult>[] = [
        newKeyChange({
          command: request.op === 'add' ? 'add-app' : 'rotate',
          appId,
          fresh,
          now,
          ...(at === undefined ? {} : { expiresAt: at }),
          ...(othersExpireBy === undefined ? {} : { othersExpireBy }),
        }),
      ];
      if (request.op === 'add' && request.allowedCidrs !== undefined) {
        steps.push(networkChange(appId, { kind: 'allow', cidrs: request.allowedCidrs }));
      }
      if (request.op === 'add' && request.rateLimit !== undefined)
        steps.push(limitChange(appId, request.rateLimit));
      return { request, fresh, change: composed(steps) };
    }
    case 'revoke':
      return { request, change: composed([revokeChange(appId, request.keyId, request.force)]) };
    case 'remove':
      return { request, change: composed([removeAppChange(appId)]) };
  }
}

/** A problem found before anything was written; `line` locates the change, when it is one change's. */
export interface ApplyProblem {
  readonly line?: number;
  readonly message: string;
}

/** What one shard gets: its changes in file order, and the leftover copies of removed apps it loses. */
export interface ShardWork {
  readonly index: number;
  readonly changes: readonly PlannedChange[];
  /** Apps removed from the shard readers use, whose copy here (a move's leftover) must go too. */
  readonly leftovers: readonly string[];
  readonly snapshot: Snapshot;
  /** The shard's text once every change is made, as checked. */
  readonly text: string;
}

export interface ApplyPlan {
  readonly shards: readonly ShardWork[];
  readonly problems: readonly ApplyProblem[];
}

function removesApp(document: KeyDocument, next: KeyDocument, appId: string): boolean {
  return document.has(appId) && !next.has(appId);
}

function leftoverChange(appIds: readonly string[]): Change<EditResult | undefined> {
  return (document) => {
    const present = appIds.filter((appId) => document.has(appId));
    if (present.length === 0) return { next: undefined, result: undefined };
    let next = document;
    for (const appId of present) next = withApp(next, appId, undefined);
    return { next, result: undefined };
  };
}

/** The change a shard's write makes: every change of the file that lands there, then its leftovers. */
export function shardChange(work: Pick<ShardWork, 'changes' | 'leftovers'>): Change<EditResult | undefined> {
  return composed([
    ...work.changes.map((planned) => planned.change as Change<EditResult>),
    leftoverChange(work.leftovers) as Change<EditResult>,
  ]);
}

function problemOf(error: unknown, request: ChangeRequest): ApplyProblem {
  const message = error instanceof Error ? error.message : 'unexpected failure';
  return { line: request.line, message: `change #${request.number} (${request.op}): ${message}` };
}

/**
 * Checks every change against the registry as read, shard by shard, and says what each shard's write will be.
 * Reads every shard any change searches, in as few calls as the registry allows, and each touched shard's
 * version quota.
 */
export async function planApply(registry: Registry, changes: readonly PlannedChange[]): Promise<ApplyPlan> {
  const layout = registry.manifest;
  const searched = [
    ...new Set(changes.flatMap((planned) => shardsToSearch(layout, planned.request.appId))),
  ].sort((a, b) => a - b);
  const snapshots = await registry.readShards(searched);
  const documents = new Map<number, KeyDocument>();
  for (const [index, snapshot] of snapshots) {
    documents.set(index, documentOfShard(registry, index, snapshot, registry.kind === 'files'));
  }
  const problems: ApplyProblem[] = [];
  const targets: { readonly index: number; readonly planned: PlannedChange }[] = [];
  for (const planned of changes) {
    const { appId } = planned.request;
    const search = shardsToSearch(layout, appId);
    const holder = search.find((index) => documents.get(index)?.has(appId) === true);
    const home = search[0] ?? 0;
    targets.push({ index: holder ?? home, planned });
  }

  const shards: ShardWork[] = [];
  const leftoversOf = new Map<number, string[]>();
  const groups = byShard(targets, (target) => target.index);
  for (const [index, group] of groups) {
    let document = documents.get(index) ?? new Map();
    for (const { planned } of group) {
      try {
        const { next } = planned.change(document, { isRetry: false });
        const after = next ?? document;
        if (removesApp(document, after, planned.request.appId)) {
          for (const other of shardsToSearch(layout, planned.request.appId)) {
            if (other !== index && documents.get(other)?.has(planned.request.appId) === true) {
              leftoversOf.set(other, [...(leftoversOf.get(other) ?? []), planned.request.appId]);
            }
          }
        }
        document = after;
      } catch (error) {
        problems.push(problemOf(error, planned.request));
      }
    }
    documents.set(index, document);
  }
  for (const index of new Set([...groups.keys(), ...leftoversOf.keys()])) {
    const leftovers = leftoversOf.get(index) ?? [];
    let document = documents.get(index) ?? new Map();
    for (const appId of leftovers) document = withApp(document, appId, undefined);
    const text = serializeKeyDocument(document);
    const snapshot = snapshots.get(index) ?? { text: undefined, version: 'absent' };
    try {
      checkSecretSize(text);
    } catch (error) {
      problems.push({
        message: `${shardLabel(registry, index)}: ${error instanceof Error ? error.message : ''}`,
      });
    }
    shards.push({
      index,
      changes: (groups.get(index) ?? []).map(({ planned }) => planned),
      leftovers,
      snapshot,
      text,
    });
  }
  shards.sort((a, b) => a.index - b.index);
  for (const work of shards) {
    const budget = await registry.shard(work.index).store.writeBudget?.(1);
    if (budget?.verdict === 'refuse')
      problems.push({ message: budgetRefusal(shardLabel(registry, work.index), budget) });
  }
  problems.sort((a, b) => (a.line ?? Infinity) - (b.line ?? Infinity));
  return { shards, problems };
}

export type ShardOutcome =
  | { readonly index: number; readonly status: 'applied' | 'unchanged'; readonly keys: number }
  | { readonly index: number; readonly status: 'failed'; readonly reason: string };

export interface ApplyRun {
  readonly outcomes: readonly ShardOutcome[];
  readonly warnings: readonly string[];
  readonly unusedVersions: number;
}

/** `{"appId","keyId","key"}` (and "expires"): one line of the keys file. */
function keyLine(planned: PlannedChange, now: number): string | undefined {
  const { fresh, request } = planned;
  if (fresh === undefined || (request.op !== 'add' && request.op !== 'rotate')) return undefined;
  const at = expiresAt(request.expiry, now);
  return JSON.stringify({
    appId: request.appId,
    keyId: fresh.keyId,
    key: fresh.key,
    ...(at === undefined ? {} : { expires: formatTimestamp(at) }),
  });
}

async function inTurn<Item, Result>(
  items: readonly Item[],
  concurrency: number,
  work: (item: Item) => Promise<Result>,
): Promise<Result[]> {
  const results: Result[] = new Array<Result>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const position = next++;
      const item = items[position];
      if (item !== undefined) results[position] = await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return results;
}

/** Shards written at once: enough to keep a round trip busy, few enough to stay far from Secrets Manager's rates. */
export const APPLY_CONCURRENCY = 4;

/**
 * Writes each shard of the plan (compare-and-swap, again on a conflict from a fresh read), its keys to `keys` as
 * soon as it has landed. A shard that fails does not stop the others.
 */
export async function runApply(
  registry: Registry,
  plan: ApplyPlan,
  keys: KeySink | undefined,
  now: number,
  options: Omit<EditOptions, 'firstRead' | 'shardLabel' | 'createIfMissing'>,
): Promise<ApplyRun> {
  const warnings: string[] = [];
  let unusedVersions = 0;
  const outcomes = await inTurn(plan.shards, APPLY_CONCURRENCY, async (work): Promise<ShardOutcome> => {
    try {
      const outcome = await editKeys(registry.shard(work.index).store, shardChange(work), {
        ...options,
        firstRead: work.snapshot,
        createIfMissing: registry.kind === 'files',
        ...(registry.sharded ? { shardLabel: shardLabel(registry, work.index) } : {}),
      });
      warnings.push(...outcome.warnings);
      unusedVersions += outcome.unusedVersions;
      const lines = work.changes.flatMap((planned) => keyLine(planned, now) ?? []);
      await keys?.write(lines);
      return { index: work.index, status: outcome.wrote ? 'applied' : 'unchanged', keys: lines.length };
    } catch (error) {
      return {
        index: work.index,
        status: 'failed',
        reason: error instanceof Error ? error.message : 'unexpected failure',
      };
    }
  });
  return { outcomes, warnings, unusedVersions };
}

/** `3 apps added, 1 rotated, 1 key revoked, 1 app removed`. */
export function changeSummary(work: Pick<ShardWork, 'changes' | 'leftovers'>): string {
  const count = (op: ChangeRequest['op']) =>
    work.changes.filter((planned) => planned.request.op === op).length;
  const parts = [
    [count('add'), 'app added', 'apps added'],
    [count('rotate'), 'app rotated', 'apps rotated'],
    [count('revoke'), 'key revoked', 'keys revoked'],
    [count('remove'), 'app removed', 'apps removed'],
    [work.leftovers.length, 'leftover copy of a removed app', 'leftover copies of removed apps'],
  ] as const;
  return parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${groupDigits(n)} ${n === 1 ? one : many}`)
    .join(', ');
}

/** `40,120 bytes (61.2% full)`: a shard's text as it will be. */
export function fillText(text: string): string {
  const size = secretSize(text);
  return `${groupDigits(size.bytes)} bytes (${size.fillPercent.toFixed(1)}% full)`;
}
