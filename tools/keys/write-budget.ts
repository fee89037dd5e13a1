import { formatTimestamp } from '../../shared/keys/timestamp';

/**
 * Secrets Manager's quota on versions of one secret: it removes unlabelled versions once there are more than 100,
 * but never one younger than 24 hours, so a secret that gained 100 versions in a day refuses the next write
 * (LimitExceededException) until the oldest of them turns 24 hours old. Every write of the key CLI is one
 * PutSecretValue, so one version; a write that lost a compare-and-swap race still made its version (unused, but
 * counted). Before each write the CLI lists the shard's versions (ListSecretVersionIds, IncludeDeprecated) and
 * counts what Secrets Manager cannot remove: every version younger than 24 hours and every labelled one. Pure.
 */
export const VERSION_QUOTA = 100;

/** From this many versions after a write, the write is made with a warning while there is room to act. */
export const VERSION_WARNING = 80;

export const VERSION_WINDOW_MS = 24 * 3_600_000;

export interface ListedVersion {
  readonly versionId: string;
  /** Epoch ms; undefined when Secrets Manager gave none (counted as young: never under-count). */
  readonly createdAt: number | undefined;
  readonly stages: readonly string[];
}

export interface WriteBudget {
  /** Versions Secrets Manager cannot remove now: younger than 24 hours, or labelled. */
  readonly held: number;
  /** Of those, created in the last 24 hours. */
  readonly young: number;
  /** When enough young versions turn 24 hours old for `writes` more to fit; undefined when they fit now. */
  readonly fitsFrom: number | undefined;
  readonly writes: number;
  readonly verdict: 'ok' | 'warn' | 'refuse';
}

/** What `writes` more versions would meet on a secret whose versions are `versions`, at `now`. */
export function writeBudget(versions: readonly ListedVersion[], now: number, writes = 1): WriteBudget {
  const youngAges = versions
    .filter((version) => version.createdAt === undefined || now - version.createdAt < VERSION_WINDOW_MS)
    .map((version) => version.createdAt ?? now)
    .sort((a, b) => a - b);
  const oldLabelled = versions.filter(
    (version) =>
      version.createdAt !== undefined &&
      now - version.createdAt >= VERSION_WINDOW_MS &&
      version.stages.length > 0,
  ).length;
  const held = youngAges.length + oldLabelled;
  const after = held + writes;
  const over = after - VERSION_QUOTA;
  // The `over`-th oldest young version frees the last slot needed when it turns 24 hours old.
  const freeing = over > 0 ? youngAges[over - 1] : undefined;
  return {
    held,
    young: youngAges.length,
    fitsFrom: freeing === undefined ? undefined : freeing + VERSION_WINDOW_MS,
    writes,
    verdict: over > 0 ? 'refuse' : after >= VERSION_WARNING ? 'warn' : 'ok',
  };
}

const WHAT_TO_DO = 'batch changes into one write per shard with "apply"';

/** The one line that refuses a write (budget.verdict 'refuse'), naming the shard and what to do. */
export function budgetRefusal(label: string, budget: WriteBudget): string {
  const wait =
    budget.fitsFrom === undefined
      ? 'wait until some of its versions are 24 hours old'
      : `wait until ${formatTimestamp(Math.ceil(budget.fitsFrom / 1_000) * 1_000)}`;
  const writes = budget.writes === 1 ? 'this write' : `these ${budget.writes} writes`;
  return (
    `${label} already holds ${budget.held} versions Secrets Manager keeps (${budget.young} made in the last 24 hours), ` +
    `and it refuses a version past ${VERSION_QUOTA} until one is 24 hours old, so ${writes} would fail; ` +
    `nothing was written: ${WHAT_TO_DO}, or ${wait}`
  );
}

/** The warning after a write that left the shard at or past VERSION_WARNING versions. */
export function budgetWarning(label: string, budget: WriteBudget): string {
  const after = budget.held + budget.writes;
  return (
    `${label} now holds ${after} of the ${VERSION_QUOTA} versions Secrets Manager allows within 24 hours ` +
    `(each write adds one; it refuses writes past ${VERSION_QUOTA}): ${WHAT_TO_DO}, or space edits out`
  );
}
