import {
  countKeysExpiringWithin,
  describeKeyringProblem,
  MalformedSecretError,
  parseKeyring,
} from '../../shared/keys/keyring';
import { secretSize } from '../../shared/keys/secret-size';
import { shardOf } from '../../shared/keys/shard';

/** What one shard holds, in numbers only: never an app id, a key id or the value. */
export interface ShardMeasurement {
  readonly shard: number;
  /** UTF-8 bytes of the value. */
  readonly bytes: number;
  /** Share of Secrets Manager's 65,536 bytes, in percent. */
  readonly fillPercent: number;
  /** Apps that can authenticate. */
  readonly apps: number;
  /** Their keys, expired ones included until they are pruned. */
  readonly keys: number;
  /** As the KeysExpiringSoon alarm counts them (shared/keys/keyring.ts, countKeysExpiringWithin). */
  readonly keysExpiringSoon: number;
  /** Entries that are not a valid app: they never authenticate. */
  readonly malformedEntries: number;
  /**
   * Apps whose home under the current shard count is another shard: left for the key CLI's reshard to move (or to
   * remove, once copied). 0 everywhere once a reshard is done.
   */
  readonly appsElsewhere: number;
  /** The first malformed entries, by position only (`entry #3, key #2: ...`). */
  readonly entryProblems: readonly string[];
}

/** A shard the monitor could not measure, and why, in words that never quote its value. */
export interface ShardFailure {
  readonly shard: number;
  /** `unreadable`: Secrets Manager did not return its value; `malformed`: the value is not a keyring. */
  readonly state: 'unreadable' | 'malformed';
  readonly problem: string;
}

export type ShardOutcome =
  | { readonly ok: true; readonly measurement: ShardMeasurement }
  | { readonly ok: false; readonly failure: ShardFailure };

export interface MeasureContext {
  /** Epoch ms the expiry window starts at. */
  readonly now: number;
  /** Keys that expire within this window count in keysExpiringSoon. */
  readonly expiryWarningMs: number;
  /** The registry's current shard count: where each app's home is. */
  readonly shards: number;
}

/** How many malformed entries a shard's log line names: enough to find them, bounded for a shard full of them. */
export const ENTRY_PROBLEMS_LOGGED = 10;

/**
 * Measures one shard's value with the same parser the payment Lambda uses, so a shard it measures is one the
 * Lambda can serve. A value that is not a JSON object, or whose every entry is malformed, is a failure: the Lambda
 * would answer 503 for its apps.
 */
export function measureShard(shard: number, secretString: string, context: MeasureContext): ShardOutcome {
  let parsed: ReturnType<typeof parseKeyring>;
  try {
    parsed = parseKeyring(secretString);
  } catch (error) {
    if (!(error instanceof MalformedSecretError)) throw error;
    return { ok: false, failure: { shard, state: 'malformed', problem: error.message } };
  }
  const { keyring, problems } = parsed;
  const size = secretSize(secretString);
  let keys = 0;
  let appsElsewhere = 0;
  for (const [appId, app] of keyring) {
    keys += app.keys.length;
    if (shardOf(appId, context.shards) !== shard) appsElsewhere += 1;
  }
  return {
    ok: true,
    measurement: {
      shard,
      bytes: size.bytes,
      fillPercent: size.fillPercent,
      apps: keyring.size,
      keys,
      keysExpiringSoon: countKeysExpiringWithin(keyring, context.now, context.expiryWarningMs),
      malformedEntries: new Set(problems.map((problem) => problem.entryPosition)).size,
      appsElsewhere,
      entryProblems: problems.slice(0, ENTRY_PROBLEMS_LOGGED).map(describeKeyringProblem),
    },
  };
}

/** The registry as a whole, from every shard's outcome. */
export interface RegistrySummary {
  /** Shards measured. */
  readonly measuredShards: number;
  /** Shards that could not be read or are not a keyring, in order. */
  readonly failedShards: readonly number[];
  /** The fullest shard measured; absent when none was. */
  readonly fullest?: { readonly shard: number; readonly fillPercent: number; readonly bytes: number };
  readonly apps: number;
  readonly keys: number;
  readonly keysExpiringSoon: number;
  readonly appsElsewhere: number;
}

export function summarizeRegistry(outcomes: readonly ShardOutcome[]): RegistrySummary {
  const measured = outcomes.flatMap((outcome) => (outcome.ok ? [outcome.measurement] : []));
  const failedShards = outcomes
    .flatMap((outcome) => (outcome.ok ? [] : [outcome.failure.shard]))
    .sort((a, b) => a - b);
  const fullest = measured.reduce<ShardMeasurement | undefined>(
    (best, next) => (best === undefined || next.fillPercent > best.fillPercent ? next : best),
    undefined,
  );
  const total = (pick: (measurement: ShardMeasurement) => number): number =>
    measured.reduce((sum, measurement) => sum + pick(measurement), 0);
  return {
    measuredShards: measured.length,
    failedShards,
    ...(fullest && {
      fullest: { shard: fullest.shard, fillPercent: fullest.fillPercent, bytes: fullest.bytes },
    }),
    apps: total((measurement) => measurement.apps),
    keys: total((measurement) => measurement.keys),
    keysExpiringSoon: total((measurement) => measurement.keysExpiringSoon),
    appsElsewhere: total((measurement) => measurement.appsElsewhere),
  };
}
