import type { AppListing, KeyListing } from '../../shared/keys/key-document';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { shardsToSearch } from '../../shared/keys/registry';
import type { SecretSize } from '../../shared/keys/secret-size';
import { formatTimestamp } from '../../shared/keys/timestamp';
import type { ChangeFileProblem, ChangeRequest } from './change-file';
import {
  ownLimitOf,
  type EditResult,
  type ExpireResult,
  type LimitResult,
  type NetworkResult,
  type NewKeyResult,
  type PruneAppResult,
  type RevokeResult,
} from './changes';
import { formatRemaining } from './duration';
import type { Plan, ShardPlan, ShardWrite } from './engine';
import type { LeakedAction, LeakedAppResult, LeakedInput, Sighting } from './leaked';
import type { RegistryPlacement } from './placement';
import { shardLabel, type Registry } from './registry-access';
import type { ReshardReport } from './reshard';
import { groupDigits, SecretTooLargeError } from './size-guard';

/**
 * What the key CLI prints, for people and (`--json`) for scripts: each edit's result, list, where, apply, reshard and
 * leaked, and their notes and problems. A key appears only as the first line (or the `key` field) after add-app or
 * rotate, the commands that create one (apply and leaked --rotate hand theirs out through key-sink.ts). Instants are
 * shown in UTC, whatever offset an expiry was written with, so that they line up and compare as text.
 */

/** One JSON value and a newline: what every `--json` prints. */
const jsonLine = (value: unknown): string => JSON.stringify(value) + '\n';

/** How an app's allowlist reads: a clear statement when it allows nothing at all. */
function networksOf(allowedCidrs: readonly string[] | undefined): string {
  if (allowedCidrs === undefined) return 'any network';
  if (allowedCidrs.length === 0) return 'no network (its allowlist is empty: every request is refused)';
  return `only ${allowedCidrs.join(' ')}`;
}

/** `20/s, burst 40`; a fraction as written (`0.5/s`). */
function limitText(limit: RateLimit): string {
  return `${limit.perSecond}/s, burst ${limit.burst}`;
}

/** Where the default limit of an app without its own comes from, in the words of each store. */
const DEFAULT_LIMIT_WORDS = {
  secrets: {
    setting: "the stack's appRateLimit",
    named: "the stack's default",
    takesEffect: "in effect within the key cache's TTL, where the stack has appRateLimit",
  },
  files: {
    setting: "the local server's APP_RATE_LIMIT",
    named: "the local server's default",
    takesEffect: 'in effect at once, where the local server runs with APP_RATE_LIMIT',
  },
} as const satisfies Record<Registry['kind'], Record<'setting' | 'named' | 'takesEffect', string>>;

/**
 * An app's rate limit and where it comes from. The CLI edits a secret or a key file, not what reads it: it knows the
 * default only when the operator names it (list --default-limit).
 */
function rateLimitOf(app: AppListing, defaultLimit: RateLimit | undefined, store: Registry['kind']): string {
  if (app.rateLimit !== undefined) return `${limitText(ownLimitOf(app.rateLimit))} (this app's own)`;
  if (defaultLimit !== undefined) return `${limitText(defaultLimit)} (${DEFAULT_LIMIT_WORDS[store].named})`;
  return `${DEFAULT_LIMIT_WORDS[store].setting}, if set`;
}

/**
 * What `limit` and `list --json` say of an app's rate limit: its own (`source: app`), or the stack's default
 * (`source: default`), with the default's figures only when the operator named them (list --default-limit).
 */
function rateLimitJson(own: RateLimit | undefined, defaultLimit: RateLimit | undefined) {
  if (own !== undefined) return { ...own, source: 'app' as const };
  return defaultLimit === undefined
    ? { source: 'default' as const }
    : { ...defaultLimit, source: 'default' as const };
}

/** `expires` (UTC, or null when it does not expire) and `expired`, for `--json`. */
function expiryJson(expiresAt: number | undefined, now: number) {
  return {
    expires: expiresAt === undefined ? null : formatTimestamp(expiresAt),
    expired: expiresAt !== undefined && expiresAt <= now,
  };
}

/** What an edit reports: a line for people, and the value `--json` prints. */
interface Report {
  readonly text: string;
  readonly json: unknown;
}

function limitReport(result: LimitResult, store: Registry['kind']): Report {
  const { appId, rateLimit } = result;
  const words = DEFAULT_LIMIT_WORDS[store];
  const text =
    rateLimit === undefined
      ? `app ${appId}: no rate limit of its own; ${words.setting} applies, if set\n`
      : `app ${appId}: its own rate limit is now ${limitText(rateLimit)} (${words.takesEffect})\n`;
  return { text, json: { appId, rateLimit: rateLimitJson(rateLimit, undefined) } };
}

/**
 * add-app and rotate: the key on a line of its own. `--json` keeps `{appId, keyId, key}` and adds `expires` (the
 * new key's) and `othersExpireBy` (rotate --grace) only when those were asked for.
 */
function newKeyReport(result: NewKeyResult): Report {
  const { appId, fresh, expires, othersExpireBy } = result;
  const stored = fresh.storage === 'plain' ? ' (stored in plain text: --plain)' : '';
  const created = `${fresh.keyId}${stored}${expires === undefined ? '' : `, expiring ${expires}`}`;
  const what =
    result.command === 'add-app'
      ? `created with key ${created}`
      : `added key ${created}; valid keys: ${result.validKeyIds.join(' ')}`;
  const grace =
    othersExpireBy === undefined
      ? ''
      : result.othersExpired
        ? '; every other key has expired (list still shows them; prune removes them)'
        : `; every other key expires by ${othersExpireBy}`;
  return {
    text: `${fresh.key}\napp ${appId}: ${what}${grace}; the key above is shown only this once\n`,
    json: {
      appId,
      keyId: fresh.keyId,
      key: fresh.key,
      ...(expires === undefined ? {} : { expires }),
      ...(othersExpireBy === undefined ? {} : { othersExpireBy }),
    },
  };
}

function revokeText(result: RevokeResult): string {
  const { appId, keyId, keyIds } = result;
  switch (result.outcome) {
    case 'revoked':
      return `app ${appId}: revoked key ${keyId}; valid keys: ${keyIds.join(' ')}\n`;
    case 'app-removed':
      return `app ${appId}: revoked key ${keyId}, its last key; the app is removed\n`;
    case 'key-already-gone':
      return `app ${appId}: key ${keyId} is already revoked; valid keys: ${keyIds.join(' ')}\n`;
    case 'app-already-gone':
      return `app ${appId} is already gone; nothing to revoke\n`;
  }
}

function expireText(result: ExpireResult, now: number): string {
  const { appId, keyId, expiresAt } = result;
  if (expiresAt === undefined) return `app ${appId}: key ${keyId} no longer expires\n`;
  const at = formatTimestamp(expiresAt);
  if (expiresAt <= now) {
    return `app ${appId}: key ${keyId} has expired (at ${at}); list still shows it, prune removes it\n`;
  }
  return `app ${appId}: key ${keyId} expires at ${at} (in ${formatRemaining(expiresAt - now)})\n`;
}

function pruneText(result: PruneAppResult): string {
  if (result.removed.length === 0) {
    return result.appId === undefined ? 'no expired keys\n' : `app ${result.appId} has no expired keys\n`;
  }
  const byApp = new Map<string, string[]>();
  for (const { appId, keyId } of result.removed) byApp.set(appId, [...(byApp.get(appId) ?? []), keyId]);
  return [...byApp]
    .map(([appId, keyIdList]) => {
      const keyIds = keyIdList.join(' ');
      const plural = keyIdList.length === 1 ? 'key' : 'keys';
      const gone = result.removedApps.includes(appId)
        ? '; that was every key it had, so the app is removed'
        : '';
      return `app ${appId}: removed expired ${plural} ${keyIds}${gone}\n`;
    })
    .join('');
}

function networksText(result: NetworkResult): string {
  const { appId, allowedCidrs } = result;
  if (allowedCidrs === undefined) return `app ${appId}: no allowlist; it may call from any network\n`;
  if (allowedCidrs.length === 0) {
    return (
      `app ${appId}: its allowlist is now empty, so it may call from no network: every request is refused ` +
      `(allow ${appId} <cidr> adds a network; allow ${appId} --any lifts the allowlist)\n`
    );
  }
  return `app ${appId}: may call only from ${allowedCidrs.join(' ')}\n`;
}

/**
 * `now` is the instant the command read its clock at: what "expired" and "in 3d" refer to. `store`: what was edited,
 * for the words on default limits.
 */
function resultReport(result: EditResult, now: number, store: Registry['kind']): Report {
  const { appId } = result;
  switch (result.command) {
    case 'add-app':
    case 'rotate':
      return newKeyReport(result);
    case 'revoke':
      return { text: revokeText(result), json: { appId, revokedKeyId: result.keyId, keyIds: result.keyIds } };
    case 'remove-app': {
      const { removedKeyIds } = result;
      const keys = removedKeyIds.length > 0 ? ` and its keys ${removedKeyIds.join(' ')}` : '';
      return { text: `removed app ${appId}${keys}\n`, json: { appId, removedKeyIds } };
    }
    case 'expire':
      return {
        text: expireText(result, now),
        json: { appId, keyId: result.keyId, ...expiryJson(result.expiresAt, now) },
      };
    case 'prune':
      return { text: pruneText(result), json: { removed: result.removed, removedApps: result.removedApps } };
    case 'allow':
    case 'disallow':
      return { text: networksText(result), json: { appId, allowedCidrs: result.allowedCidrs ?? null } };
    case 'limit':
      return limitReport(result, store);
  }
}

export function formatResult(result: EditResult, now: number, store: Registry['kind'] = 'secrets'): string {
  return resultReport(result, now, store).text;
}

export function formatResultJson(result: EditResult, now: number): string {
  return jsonLine(resultReport(result, now, 'secrets').json);
}

function formatKeyLine({ keyId, expiresAt, digest: onlyDigest }: KeyListing, now: number): string {
  const state = (at: number) => (at <= now ? 'expired' : `expires in ${formatRemaining(at - now)}`);
  const expiry = expiresAt === undefined ? 'never' : `${formatTimestamp(expiresAt)}  ${state(expiresAt)}`;
  return `  ${keyId}  ${expiry}${onlyDigest ? '  (stored as its sha256 digest)' : ''}\n`;
}

/**
 * `list`: each app with the networks it may call from and its rate limit, then one line per key (oldest first): its
 * id, its expiry or `never`, and whether only its digest is stored. `defaultLimit`: the stack's (or, for a key file,
 * the local server's), when the operator named it. An empty registry is list.ts's to say (`no apps`).
 */
export function formatList(
  apps: readonly AppListing[],
  now: number,
  defaultLimit?: RateLimit,
  store: Registry['kind'] = 'secrets',
): string {
  return apps
    .map(
      (app) =>
        `${app.appId}: ${networksOf(app.allowedCidrs)}; rate limit: ${rateLimitOf(app, defaultLimit, store)}\n` +
        app.keys.map((key) => formatKeyLine(key, now)).join(''),
    )
    .join('');
}

/** The objects of `list --json`, documented in docs/keys.md; `keyIds` is kept for scripts written before expiry. */
export function listJson(apps: readonly AppListing[], now: number, defaultLimit?: RateLimit) {
  return apps.map((app) => ({
    appId: app.appId,
    keyIds: app.keys.map((key) => key.keyId),
    // digest: only the key's sha256: digest is stored.
    keys: app.keys.map((key) => ({
      keyId: key.keyId,
      ...expiryJson(key.expiresAt, now),
      digest: key.digest,
    })),
    // null: any network; []: none.
    allowedCidrs: app.allowedCidrs ?? null,
    rateLimit: rateLimitJson(
      app.rateLimit === undefined ? undefined : ownLimitOf(app.rateLimit),
      defaultLimit,
    ),
  }));
}

export function formatListJson(apps: readonly AppListing[], now: number, defaultLimit?: RateLimit): string {
  return jsonLine(listJson(apps, now, defaultLimit));
}

// where, apply and reshard; list's notes.

const plural = (n: number, one: string, many: string): string => `${groupDigits(n)} ${n === 1 ? one : many}`;

/** `1 key`, `2 keys`: a count as it comes, without digit groups. */
export const counted = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : 'unexpected failure');

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
    return jsonLine({
      appId,
      shards: registry.manifest.shards,
      home: place(home),
      previousHome: previous === undefined ? null : place(previous),
      foundIn: found ?? null,
    });
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

/** An apply as its report sees it: the registry, the plan, and the file's changes by their position in the plan. */
export interface ApplyRun {
  readonly registry: Registry;
  readonly plan: Plan<EditResult>;
  readonly requests: readonly ChangeRequest[];
}

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
    .map(([n, one, many]) => plural(n, one, many))
    .join(', ');
}

/** `40,120 bytes (61.2% full)`: a shard's size as it will be. */
function fillText(size: SecretSize): string {
  return `${groupDigits(size.bytes)} bytes (${size.fillPercent.toFixed(1)}% full)`;
}

/** One line per problem of an apply file, each `error: line L, column C: ...`, then the verdict. */
export function formatFileProblems(file: string, problems: readonly ChangeFileProblem[]): string {
  return problemLines(
    problems.map((problem) => `${file} line ${problem.line}, column ${problem.column}: ${problem.message}`),
    `${file} has ${plural(problems.length, 'problem', 'problems')}; nothing was applied, nothing was written`,
  );
}

/** The first 50 problems, one `error:` line each, `… and n more`, then the verdict. */
function problemLines(problems: readonly string[], verdict: string): string {
  const more = problems.length > 50 ? [`… and ${problems.length - 50} more`] : [];
  return [...problems.slice(0, 50), ...more, verdict].map((line) => `error: ${line}\n`).join('');
}

/** Each problem of a plan, `change #n (op): why` located by its line, then the shards' own, in that order. */
export function formatPlanProblems({ registry, plan, requests }: ApplyRun, file: string): string {
  const located = plan.problems.map((problem) => {
    if ('shard' in problem) {
      const own =
        problem.error instanceof SecretTooLargeError ? `${shardLabel(registry, problem.shard)}: ` : '';
      return { line: Infinity, text: `${own}${reasonOf(problem.error)}` };
    }
    const request = requests[problem.edit];
    const text = `change #${request?.number ?? 0} (${request?.op ?? ''}): ${reasonOf(problem.error)}`;
    return { line: request?.line ?? Infinity, text: `${file} line ${request?.line ?? 0}: ${text}` };
  });
  return problemLines(
    located.sort((a, b) => a.line - b.line).map((problem) => problem.text),
    `${plural(plan.problems.length, 'change does', 'changes do')} not fit the registry as it is; nothing was written`,
  );
}

export function formatDryRun({ registry, plan, requests }: ApplyRun, json: boolean): string {
  if (json) {
    return jsonLine({
      dryRun: true,
      shards: plan.shards.map((work) => ({
        shard: work.index,
        id: registry.shard(work.index).id,
        changes: work.edits.length,
        leftovers: work.leftovers.length,
        bytes: work.size.bytes,
      })),
    });
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

/** How an apply's writes ended. */
export interface ApplyOutcome {
  readonly writes: readonly ShardWrite<EditResult>[];
  readonly keysTo: string | undefined;
  /** New keys handed out whole. */
  readonly keys: number;
  /** Shards not written because the run stopped (the keys could not be handed out). */
  readonly notStarted: readonly number[];
}

/** The line of one shard of an apply: as it is written, or why it was not. */
export function applyShardLine(
  { registry, requests }: ApplyRun,
  shard: ShardPlan,
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

/** An apply's shards by outcome, with the changes and the file's lines of each. */
function applyTally({ plan, requests }: ApplyRun, { writes, notStarted }: ApplyOutcome) {
  const editsOf = (index: number) => plan.shards.find((shard) => shard.index === index)?.edits ?? [];
  const changes = (indices: readonly number[]) =>
    indices.reduce((sum, index) => sum + editsOf(index).length, 0);
  const linesOf = (index: number) => editsOf(index).map((edit) => requests[edit]?.line ?? 0);
  const failed = writes.filter((write) => write.status === 'failed').map(({ index }) => index);
  const done = writes.filter((write) => write.status !== 'failed').map(({ index }) => index);
  return { editsOf, changes, linesOf, done, notWritten: [...failed, ...notStarted] };
}

/** What an apply did, after its shards' lines: one line, then the changes to apply again if some were not. */
export function applySummary(run: ApplyRun, outcome: ApplyOutcome): string {
  const { changes, linesOf, done, notWritten } = applyTally(run, outcome);
  const written = outcome.writes.filter((write) => write.status === 'written').length;
  const keys =
    outcome.keys === 0
      ? ''
      : `; ${plural(outcome.keys, 'new key', 'new keys')} in ${outcome.keysTo ?? 'standard output'}`;
  const lines = [
    `applied ${plural(changes(done), 'change', 'changes')} with ${plural(written, 'write', 'writes')}${keys}\n`,
  ];
  if (notWritten.length > 0) {
    const notApplied = notWritten.flatMap(linesOf);
    const shown = notApplied.slice(0, 20).join(', ');
    lines.push(
      `${plural(notWritten.length, 'shard', 'shards')} not written: the changes on lines ${shown}` +
        `${notApplied.length > 20 ? ' …' : ''} were not applied; apply them again (the others are done)\n`,
    );
  }
  return lines.join('');
}

/** `apply --json`: one object once every shard is done. */
export function applyJson(run: ApplyRun, outcome: ApplyOutcome): string {
  const { editsOf, changes, linesOf, done, notWritten } = applyTally(run, outcome);
  const shards = outcome.writes.map((write) => ({
    shard: write.index,
    id: run.registry.shard(write.index).id,
    status: write.status === 'written' ? 'applied' : write.status,
    changes: editsOf(write.index).length,
    ...(write.status === 'failed' ? { reason: reasonOf(write.error), lines: linesOf(write.index) } : {}),
  }));
  const keysTo = outcome.keysTo === undefined ? {} : { keysTo: outcome.keysTo };
  return jsonLine({
    shards,
    applied: changes(done),
    failed: changes(notWritten),
    keys: outcome.keys,
    ...keysTo,
  });
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
  const ascending = (indices: readonly number[]) => [...new Set(indices)].sort((a, b) => a - b);
  const touched = ascending([...copied.map((move) => move.to), ...removed.map((leftover) => leftover.from)]);
  return touched.map((index) => {
    const copies = copied.filter((move) => move.to === index);
    const removals = removed.filter((leftover) => leftover.from === index).length;
    const from = ascending(copies.map((move) => move.from)).join(', ');
    const copyText = `${verb.copy} ${plural(copies.length, 'app', 'apps')} home (from shard ${from})`;
    const parts = [
      ...(copies.length === 0 ? [] : [copyText]),
      ...(removals === 0 ? [] : [`${verb.remove} ${plural(removals, 'old copy', 'old copies')}`]),
    ];
    return `${shardLabel(registry, index)}: ${parts.join(', ')}\n`;
  });
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
    return jsonLine({
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
    });
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
  lines.push(
    ...report.carried.map(
      (appId) =>
        `app ${appId} was edited in its old home during the move: the edit was carried to its new home\n`,
    ),
    ...report.kept.map(
      ({ appId, from }) =>
        `app ${appId} changed in both homes during the move: its old copy in shard ${from} was left; run reshard again\n`,
    ),
    leftApps.size === 0
      ? 'nothing is left to move\n'
      : `${plural(leftApps.size, 'app is', 'apps are')} still not only in their home: run reshard again\n`,
  );
  if (leftApps.size === 0 && report.previousShards !== undefined && registry.kind === 'secrets') {
    lines.push(
      `now deploy without keyShardsPrevious (-c keyShards=${report.shards}): readers need not look in the old homes any more\n`,
    );
  }
  return lines.join('');
}

// leaked: one line per place a key was found (its input line, app, key id, shard and what was done), one per key
// not found, one per line repeating an earlier key, and a summary; or the same as one JSON value. Given digests and
// ids only, never a key.

/** The exit codes of leaked (the others' 0, 1 and 2, and 3 of its own). */
export const LEAKED_EXIT = { ok: 0, failed: 1, notFound: 3 } as const;

export type LeakedReportAction =
  `${LeakedAction['kind']}d` | `would-${LeakedAction['kind']}` | 'already-ended' | 'gone' | 'failed';

export interface LeakedReport {
  readonly input: LeakedInput;
  readonly found: ReadonlyMap<number, readonly Sighting[]>;
  /**
   * Each shard's apps' results (as written, or as planned for a dry run), or why its write failed. Absent for a shard
   * not started (a failure stopped the run).
   */
  readonly outcomes: ShardOutcomes;
  readonly action: LeakedAction;
  readonly dryRun: boolean;
  readonly shardCount: number;
  readonly shardsWritten: number;
}

export type ShardOutcomes = ReadonlyMap<number, readonly (LeakedAppResult | undefined)[] | string>;

interface ReportEntry {
  readonly line: number;
  readonly sameAs?: number;
  readonly found: readonly {
    readonly appId: string;
    readonly keyId: string;
    readonly shard: number;
    readonly action: LeakedReportAction;
    /** When the leaked key ends, as written (or would be). */
    readonly expires?: string;
    readonly newKeyId?: string;
    readonly reason?: string;
  }[];
}

function actionOf(report: LeakedReport, { shard, appId }: Sighting, line: number) {
  const outcome = report.outcomes.get(shard);
  const result = typeof outcome === 'string' ? undefined : outcome?.find((done) => done?.appId === appId);
  if (result === undefined) {
    const reason =
      typeof outcome === 'string'
        ? outcome
        : outcome === undefined
          ? 'not written: an earlier failure stopped the run'
          : 'no result';
    return { action: 'failed' as const, reason };
  }
  const status = result.keys.find((key) => key.line === line)?.status ?? 'gone';
  const { kind } = report.action;
  const ended: LeakedReportAction = report.dryRun ? `would-${kind}` : `${kind}d`;
  const action: LeakedReportAction = status === 'ended' ? ended : status;
  const newKeyId = !report.dryRun && result.fresh !== undefined ? result.fresh.keyId : undefined;
  return { action, expires: result.endsAt, ...(newKeyId === undefined ? {} : { newKeyId }) };
}

/** Every input line, in order: where its key was found and what was done there; and the counts. */
function leakedView(report: LeakedReport) {
  const keys: ReportEntry[] = report.input.keys.map((key) => ({
    line: key.line,
    found: (report.found.get(key.line) ?? []).map((sighting) => ({
      appId: sighting.appId,
      keyId: sighting.keyId,
      shard: sighting.shard,
      ...actionOf(report, sighting, key.line),
    })),
  }));
  for (const { line, sameAs } of report.input.repeats) keys.push({ line, sameAs, found: [] });
  const notFound = report.input.keys.filter((key) => (report.found.get(key.line) ?? []).length === 0).length;
  const apps = new Set(
    [...report.found.values()].flatMap((sightings) => sightings.map((sighting) => sighting.appId)),
  ).size;
  const total = report.input.keys.length;
  return {
    keys: keys.sort((a, b) => a.line - b.line),
    summary: {
      keys: total,
      found: total - notFound,
      notFound,
      apps,
      shards: report.shardCount,
      shardsWritten: report.shardsWritten,
      dryRun: report.dryRun,
    },
  };
}

function describe(found: ReportEntry['found'][number]): string {
  switch (found.action) {
    case 'revoked':
      return `revoked (expired at ${found.expires ?? ''}; list shows it until prune)`;
    case 'rotated':
      return `rotated: new key ${found.newKeyId ?? '(none)'}; the leaked key expires at ${found.expires ?? ''}`;
    case 'would-revoke':
      return `would revoke (expire at ${found.expires ?? ''})`;
    case 'would-rotate':
      return `would rotate: a new key, the leaked key expiring at ${found.expires ?? ''}`;
    case 'already-ended':
      return `already ended (it expires by ${found.expires ?? ''}); nothing written for it`;
    case 'gone':
      return 'already gone (removed meanwhile by another writer)';
    case 'failed':
      return `NOT ended: ${found.reason ?? 'failed'}`;
  }
}

/**
 * leaked's report, as lines or (`json`) one JSON value, and its exit code: 0 when every key was found and ended (or
 * already was); 3 when some were not found; 1 when some found were not ended.
 */
export function leakedReport(report: LeakedReport, json: boolean) {
  const view = leakedView(report);
  const text = json ? jsonLine(view) : leakedLines(report, view);
  if (view.keys.some((entry) => entry.found.some((found) => found.action === 'failed'))) {
    return { text, code: LEAKED_EXIT.failed };
  }
  return { text, code: view.summary.notFound > 0 ? LEAKED_EXIT.notFound : LEAKED_EXIT.ok };
}

function leakedLines(report: LeakedReport, { keys, summary }: ReturnType<typeof leakedView>): string {
  const lines = keys.flatMap((entry) => {
    if (entry.sameAs !== undefined) return [`line ${entry.line}: the same key as line ${entry.sameAs}`];
    if (entry.found.length === 0) {
      return [
        `line ${entry.line}: not found in any of the ${counted(report.shardCount, 'shard')}; nothing written for it`,
      ];
    }
    return entry.found.map(
      (found) =>
        `line ${entry.line}: app ${found.appId}, key ${found.keyId}, shard ${found.shard}: ${describe(found)}`,
    );
  });
  const written = report.dryRun
    ? 'dry run: nothing written'
    : `${counted(report.shardsWritten, 'shard')} written`;
  lines.push(
    `${counted(summary.keys, 'key')}: ${summary.found} found (${counted(summary.apps, 'app')}), ${summary.notFound} not found; ${written}`,
  );
  return lines.map((line) => `${line}\n`).join('');
}
