import { shardsToSearch } from '../../shared/keys/registry';
import type { SecretSize } from '../../shared/keys/secret-size';
import type { ChangeFileProblem, ChangeRequest } from './change-file';
import type { EditResult } from './changes';
import type { Plan, ShardPlan, ShardWrite } from './engine';
import type { RegistryPlacement } from './placement';
import { shardLabel, type Registry } from './registry-access';
import type { ReshardReport } from './reshard';
import { groupDigits, SecretTooLargeError } from './size-guard';

/** What the registry commands print: where, apply, reshard, init, and list's notes. Never a key. */

const plural = (n: number, one: string, many: string): string => `${groupDigits(n)} ${n === 1 ? one : many}`;

/** list's lines on standard error when apps are not in their home (a reshard to run or to finish). */
export function placementNotes(registry: Registry, placement: RegistryPlacement): string[] {
  const notes: string[] = [];
  if (placement.misplaced.length > 0) {
    notes.push(
      `note: ${plural(placement.misplaced.length, 'app is', 'apps are')} not only in their home shard under ` +
        `${registry.manifest.shards} shards (a reshard under way or left unfinished): run "reshard" to finish it\n`,
    );
  }
  if (placement.unreachable.length > 0) {
    const some = placement.unreachable
      .slice(0, 5)
      .map((app) => app.appId)
      .join(' ');
    notes.push(
      `warning: ${plural(placement.unreachable.length, 'app is', 'apps are')} in a shard the Lambda does not look ` +
        `in (${some}${placement.unreachable.length > 5 ? ' …' : ''}), so their requests get 401: run "reshard" to ` +
        'move them home\n',
    );
  }
  return notes;
}

/** `where`: the app's home, its previous home during a reshard, and where it is found. */
export function formatWhere(
  registry: Registry,
  appId: string,
  found: number | undefined,
  json: boolean,
): string {
  const [home = 0, previous] = shardsToSearch(registry.manifest, appId);
  const place = (index: number) => ({ shard: index, id: registry.shard(index).id });
  if (json) {
    return (
      JSON.stringify({
        appId,
        shards: registry.manifest.shards,
        home: place(home),
        previousHome: previous === undefined ? null : place(previous),
        foundIn: found ?? null,
      }) + '\n'
    );
  }
  const homeText = `shard ${home} of ${registry.manifest.shards} (${registry.shard(home).id})`;
  const during =
    previous === undefined
      ? ''
      : `; until the reshard from ${registry.manifest.previousShards} shards is done, readers also look in its ` +
        `home before, shard ${previous} (${registry.shard(previous).id})`;
  const state =
    found === undefined
      ? '; it is not in the registry (add-app would put it in its home)'
      : found === home
        ? '; it is there'
        : `; it is not there yet: it is in shard ${found}`;
  return `app ${appId}: home ${homeText}${during}${state}\n`;
}

type ApplyPlan = Plan<EditResult>;

/** `3 apps added, 1 rotated, 1 key revoked, 1 app removed`. */
function changeSummary(shard: ShardPlan, requests: readonly ChangeRequest[]): string {
  const count = (op: ChangeRequest['op']) => shard.edits.filter((edit) => requests[edit]?.op === op).length;
  const parts = [
    [count('add'), 'app added', 'apps added'],
    [count('rotate'), 'app rotated', 'apps rotated'],
    [count('revoke'), 'key revoked', 'keys revoked'],
    [count('remove'), 'app removed', 'apps removed'],
    [shard.leftovers.length, 'leftover copy of a removed app', 'leftover copies of removed apps'],
  ] as const;
  return parts
    .filter(([n]) => n > 0)
    .map(([n, one, many]) => `${groupDigits(n)} ${n === 1 ? one : many}`)
    .join(', ');
}

/** `40,120 bytes (61.2% full)`: a shard's size as it will be. */
function fillText(size: SecretSize): string {
  return `${groupDigits(size.bytes)} bytes (${size.fillPercent.toFixed(1)}% full)`;
}

/** One line per problem of an apply file, each `error: line L, column C: ...`, then the verdict. */
export function formatFileProblems(file: string, problems: readonly ChangeFileProblem[]): string {
  const shown = problems
    .slice(0, 50)
    .map((problem) => `error: ${file} line ${problem.line}, column ${problem.column}: ${problem.message}\n`);
  const more = problems.length > 50 ? [`error: … and ${problems.length - 50} more\n`] : [];
  return [
    ...shown,
    ...more,
    `error: ${file} has ${plural(problems.length, 'problem', 'problems')}; nothing was applied, nothing was written\n`,
  ].join('');
}

/** Each problem of a plan, `change #n (op): why` located by its line, then the shards' own, in that order. */
export function formatPlanProblems(
  registry: Registry,
  file: string,
  plan: ApplyPlan,
  requests: readonly ChangeRequest[],
): string {
  const message = (error: unknown) => (error instanceof Error ? error.message : 'unexpected failure');
  const located = plan.problems.map((problem) => {
    if ('shard' in problem) {
      const own =
        problem.error instanceof SecretTooLargeError ? `${shardLabel(registry, problem.shard)}: ` : '';
      return { line: Infinity, text: `${own}${message(problem.error)}` };
    }
    const request = requests[problem.edit];
    const text = `change #${request?.number ?? 0} (${request?.op ?? ''}): ${message(problem.error)}`;
    return { line: request?.line ?? Infinity, text: `${file} line ${request?.line ?? 0}: ${text}` };
  });
  const shown = located
    .sort((a, b) => a.line - b.line)
    .slice(0, 50)
    .map((problem) => `error: ${problem.text}\n`);
  const more = plan.problems.length > 50 ? [`error: … and ${plan.problems.length - 50} more\n`] : [];
  return [
    ...shown,
    ...more,
    `error: ${plural(plan.problems.length, 'change does', 'changes do')} not fit the registry as it is; nothing was written\n`,
  ].join('');
}

export function formatDryRun(
  registry: Registry,
  plan: ApplyPlan,
  requests: readonly ChangeRequest[],
  json: boolean,
): string {
  if (json) {
    return (
      JSON.stringify({
        dryRun: true,
        shards: plan.shards.map((work) => ({
          shard: work.index,
          id: registry.shard(work.index).id,
          changes: work.edits.length,
          leftovers: work.leftovers.length,
          bytes: work.size.bytes,
        })),
      }) + '\n'
    );
  }
  const lines = plan.shards.map(
    (work) =>
      `${shardLabel(registry, work.index)}: would apply ${changeSummary(work, requests)}; then ${fillText(work.size)}\n`,
  );
  const changes = plan.shards.reduce((sum, work) => sum + work.edits.length, 0);
  return [
    ...lines,
    `dry run: ${plural(changes, 'change', 'changes')} would take ${plural(plan.shards.length, 'write', 'writes')}; nothing was written\n`,
  ].join('');
}

export interface ApplyReportFacts {
  readonly keysTo: string | undefined;
  /** New keys handed out whole. */
  readonly keys: number;
  /** Shards not written because the run stopped (the keys could not be handed out). */
  readonly notStarted: readonly number[];
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : 'unexpected failure');

/** The line of one shard of an apply: as it is written, or why it was not. */
export function applyShardLine(
  registry: Registry,
  shard: ShardPlan,
  requests: readonly ChangeRequest[],
  write: ShardWrite<EditResult> | undefined,
): string {
  const label = shardLabel(registry, shard.index);
  const summary = changeSummary(shard, requests);
  switch (write?.status) {
    case 'written':
      return `${label}: applied ${summary}; ${fillText(shard.size)}\n`;
    case 'unchanged':
      return `${label}: already as asked (${summary}); nothing written\n`;
    case 'failed':
      return `${label}: not applied, none of its ${plural(shard.edits.length, 'change', 'changes')}: ${reasonOf(write.error)}\n`;
    case undefined:
      return `${label}: not written, none of its ${plural(shard.edits.length, 'change', 'changes')}: the run stopped\n`;
  }
}

/** An apply's shards by outcome, with the changes of each. */
function applyTally(plan: ApplyPlan, writes: readonly ShardWrite<EditResult>[], facts: ApplyReportFacts) {
  const editsOf = (index: number) => plan.shards.find((shard) => shard.index === index)?.edits ?? [];
  const changes = (indices: readonly number[]) =>
    indices.reduce((sum, index) => sum + editsOf(index).length, 0);
  const failed = writes.filter((write) => write.status === 'failed').map(({ index }) => index);
  const done = writes.filter((write) => write.status !== 'failed').map(({ index }) => index);
  return { editsOf, changes, failed, done, notWritten: [...failed, ...facts.notStarted] };
}

/** What an apply did, after its shards' lines: one line, then the changes to apply again if some were not. */
export function applySummary(
  plan: ApplyPlan,
  requests: readonly ChangeRequest[],
  writes: readonly ShardWrite<EditResult>[],
  facts: ApplyReportFacts,
): string {
  const { editsOf, changes, done, notWritten } = applyTally(plan, writes, facts);
  const written = writes.filter((write) => write.status === 'written').length;
  const keys =
    facts.keys === 0
      ? ''
      : `; ${plural(facts.keys, 'new key', 'new keys')} in ${facts.keysTo ?? 'standard output'}`;
  const lines = [
    `applied ${plural(changes(done), 'change', 'changes')} with ${plural(written, 'write', 'writes')}${keys}\n`,
  ];
  if (notWritten.length > 0) {
    const notApplied = notWritten.flatMap((index) => editsOf(index).map((edit) => requests[edit]?.line ?? 0));
    const shown = notApplied.slice(0, 20).join(', ');
    lines.push(
      `${plural(notWritten.length, 'shard', 'shards')} not written: the changes on lines ${shown}` +
        `${notApplied.length > 20 ? ' …' : ''} were not applied; apply them again (the others are done)\n`,
    );
  }
  return lines.join('');
}

/** `apply --json`: one object once every shard is done. */
export function applyJson(
  registry: Registry,
  plan: ApplyPlan,
  requests: readonly ChangeRequest[],
  writes: readonly ShardWrite<EditResult>[],
  facts: ApplyReportFacts,
): string {
  const { editsOf, changes, done, notWritten } = applyTally(plan, writes, facts);
  const shards = writes.map((write) => ({
    shard: write.index,
    id: registry.shard(write.index).id,
    status: write.status === 'written' ? 'applied' : write.status,
    changes: editsOf(write.index).length,
    ...(write.status === 'failed'
      ? {
          reason: reasonOf(write.error),
          lines: editsOf(write.index).map((edit) => requests[edit]?.line ?? 0),
        }
      : {}),
  }));
  const keysTo = facts.keysTo === undefined ? {} : { keysTo: facts.keysTo };
  return (
    JSON.stringify({
      shards,
      applied: changes(done),
      failed: changes(notWritten),
      keys: facts.keys,
      ...keysTo,
    }) + '\n'
  );
}

/**
 * One line per shard a reshard touches (or, in a dry run, would touch): the apps copied in, from which shards, and
 * the old copies removed. However many shards, no line grows with their number beyond the shards it names.
 */
function reshardShardLines(
  registry: Registry,
  copied: readonly { readonly from: number; readonly to: number }[],
  removed: readonly { readonly from: number }[],
  verb: { readonly copy: string; readonly remove: string },
): string[] {
  const shards = new Map<number, { sources: Set<number>; copies: number; removals: number }>();
  const of = (index: number) => {
    const known = shards.get(index) ?? { sources: new Set<number>(), copies: 0, removals: 0 };
    shards.set(index, known);
    return known;
  };
  for (const move of copied) {
    const shard = of(move.to);
    shard.copies++;
    shard.sources.add(move.from);
  }
  for (const leftover of removed) of(leftover.from).removals++;
  return [...shards]
    .sort(([a], [b]) => a - b)
    .map(([index, { sources, copies, removals }]) => {
      const from = [...sources].sort((a, b) => a - b).join(', ');
      const parts = [
        ...(copies === 0 ? [] : [`${verb.copy} ${plural(copies, 'app', 'apps')} home (from shard ${from})`]),
        ...(removals === 0 ? [] : [`${verb.remove} ${plural(removals, 'old copy', 'old copies')}`]),
      ];
      return `${shardLabel(registry, index)}: ${parts.join(', ')}\n`;
    });
}

function leftText(left: ReadonlySet<string>): string {
  return left.size === 0
    ? 'nothing is left to move'
    : `${plural(left.size, 'app is', 'apps are')} still not only in their home: run reshard again`;
}

export function formatReshard(
  registry: Registry,
  report: ReshardReport,
  dryRun: boolean,
  json: boolean,
): string {
  const leftApps = new Set([
    ...report.left.moves.map((move) => move.appId),
    ...report.left.leftovers.map((item) => item.appId),
  ]);
  if (json) {
    return (
      JSON.stringify({
        shards: report.shards,
        previousShards: report.previousShards ?? null,
        dryRun,
        copied: report.copied.map(({ appId, from, to }) => ({ appId, from, to })),
        removed: report.removed.map(({ appId, from }) => ({ appId, from })),
        carried: report.carried,
        kept: report.kept.map(({ appId, from }) => ({ appId, from })),
        writes: report.writes,
        toCopy: report.left.moves.length,
        toRemove: report.left.leftovers.length,
        done: leftApps.size === 0,
      }) + '\n'
    );
  }
  if (dryRun) {
    return [
      ...reshardShardLines(registry, report.left.moves, report.left.leftovers, {
        copy: 'would copy',
        remove: 'would remove',
      }),
      `dry run: ${plural(report.left.moves.length, 'app', 'apps')} to copy home, ` +
        `${plural(report.left.leftovers.length, 'old copy', 'old copies')} to remove; nothing was written\n`,
    ].join('');
  }
  const lines = reshardShardLines(registry, report.copied, report.removed, {
    copy: 'copied',
    remove: 'removed',
  });
  if (report.copied.length === 0 && report.removed.length === 0 && report.writes === 0) {
    lines.push(
      `every app is in its home under ${plural(report.shards, 'shard', 'shards')}: nothing to move\n`,
    );
  } else {
    lines.push(
      `moved ${plural(report.copied.length, 'app', 'apps')} home; ` +
        `removed ${plural(report.removed.length, 'old copy', 'old copies')}; ${plural(report.writes, 'write', 'writes')}\n`,
    );
  }
  for (const appId of report.carried)
    lines.push(
      `app ${appId} was edited in its old home during the move: the edit was carried to its new home\n`,
    );
  for (const kept of report.kept) {
    lines.push(
      `app ${kept.appId} changed in both homes during the move: its old copy in shard ${kept.from} was left; run reshard again\n`,
    );
  }
  lines.push(`${leftText(leftApps)}\n`);
  if (leftApps.size === 0 && report.previousShards !== undefined && registry.kind === 'secrets') {
    lines.push(
      `now deploy without keyShardsPrevious (-c keyShards=${report.shards}): readers need not look in the old homes any more\n`,
    );
  }
  return lines.join('');
}
