import type { LeakedInput } from './leaked-input';
import type { LeakedAction, LeakedAppResult, Sighting } from './leaked';

/**
 * What `keys leaked` prints: one line per place a key was found (its input line, app, key id, shard and what was
 * done), one per key not found, one per line repeating an earlier key, and a summary; or the same as one JSON value.
 * Never the key: this module is given digests and ids only. Pure.
 */

/** The exit codes of leaked (the others' 0, 1 and 2, and 3 of its own). */
export const LEAKED_EXIT = { ok: 0, failed: 1, notFound: 3 } as const;

export type LeakedReportAction =
  'revoked' | 'rotated' | 'already-ended' | 'gone' | 'failed' | 'would-revoke' | 'would-rotate';

/** How one app's edit in one shard went: its result (as written, or as planned for a dry run), or its failure. */
export type AppOutcome =
  | { readonly status: 'done'; readonly result: LeakedAppResult }
  | { readonly status: 'failed'; readonly reason: string };

export interface LeakedReport {
  readonly input: LeakedInput;
  readonly found: ReadonlyMap<number, readonly Sighting[]>;
  /** By `${shard}\0${appId}`. Absent for an app whose shard was not started (a failure stopped the run). */
  readonly outcomes: ReadonlyMap<string, AppOutcome>;
  readonly action: LeakedAction;
  readonly dryRun: boolean;
  readonly shardCount: number;
  readonly shardsWritten: number;
}

export const outcomeKey = (shard: number, appId: string): string => `${shard}\0${appId}`;

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

function actionOf(report: LeakedReport, outcome: AppOutcome | undefined, line: number) {
  if (outcome === undefined)
    return { action: 'failed' as const, reason: 'not written: an earlier failure stopped the run' };
  if (outcome.status === 'failed') return { action: 'failed' as const, reason: outcome.reason };
  const { result } = outcome;
  const status = result.keys.find((key) => key.line === line)?.status ?? 'gone';
  const rotate = report.action.kind === 'rotate';
  const action: LeakedReportAction =
    status === 'gone'
      ? 'gone'
      : status === 'already-ended'
        ? 'already-ended'
        : report.dryRun
          ? rotate
            ? 'would-rotate'
            : 'would-revoke'
          : rotate
            ? 'rotated'
            : 'revoked';
  const newKeyId = !report.dryRun && result.fresh !== undefined ? result.fresh.keyId : undefined;
  return { action, expires: result.endsAt, ...(newKeyId === undefined ? {} : { newKeyId }) };
}

function entries(report: LeakedReport): ReportEntry[] {
  const list: ReportEntry[] = report.input.keys.map((key) => ({
    line: key.line,
    found: (report.found.get(key.line) ?? []).map((sighting) => ({
      appId: sighting.appId,
      keyId: sighting.keyId,
      shard: sighting.shard,
      ...actionOf(report, report.outcomes.get(outcomeKey(sighting.shard, sighting.appId)), key.line),
    })),
  }));
  for (const { line, sameAs } of report.input.repeats) list.push({ line, sameAs, found: [] });
  return list.sort((a, b) => a.line - b.line);
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

/** 0: every key found and ended (or already ended); 3: some not found; 1: some found but not ended. */
export function leakedExitCode(report: LeakedReport): number {
  const all = entries(report);
  if (all.some((entry) => entry.found.some((found) => found.action === 'failed'))) return LEAKED_EXIT.failed;
  if (report.input.keys.some((key) => (report.found.get(key.line) ?? []).length === 0))
    return LEAKED_EXIT.notFound;
  return LEAKED_EXIT.ok;
}

function counts(report: LeakedReport) {
  const keys = report.input.keys.length;
  const notFound = report.input.keys.filter((key) => (report.found.get(key.line) ?? []).length === 0).length;
  const apps = new Set(
    [...report.found.values()].flatMap((sightings) => sightings.map((sighting) => sighting.appId)),
  ).size;
  return { keys, found: keys - notFound, notFound, apps };
}

export function formatLeaked(report: LeakedReport): string {
  const shards = `${report.shardCount} shard${report.shardCount === 1 ? '' : 's'}`;
  const lines = entries(report).flatMap((entry) => {
    if (entry.sameAs !== undefined) return [`line ${entry.line}: the same key as line ${entry.sameAs}`];
    if (entry.found.length === 0) {
      return [`line ${entry.line}: not found in any of the ${shards}; nothing written for it`];
    }
    return entry.found.map(
      (found) =>
        `line ${entry.line}: app ${found.appId}, key ${found.keyId}, shard ${found.shard}: ${describe(found)}`,
    );
  });
  const { keys, found, notFound, apps } = counts(report);
  const written = report.dryRun
    ? 'dry run: nothing written'
    : `${report.shardsWritten} shard${report.shardsWritten === 1 ? '' : 's'} written`;
  lines.push(
    `${keys} key${keys === 1 ? '' : 's'}: ${found} found (${apps} app${apps === 1 ? '' : 's'}), ${notFound} not found; ${written}`,
  );
  return lines.map((line) => `${line}\n`).join('');
}

export function formatLeakedJson(report: LeakedReport): string {
  const { keys, found, notFound, apps } = counts(report);
  return (
    JSON.stringify({
      keys: entries(report),
      summary: {
        keys,
        found,
        notFound,
        apps,
        shards: report.shardCount,
        shardsWritten: report.shardsWritten,
        dryRun: report.dryRun,
      },
    }) + '\n'
  );
}
