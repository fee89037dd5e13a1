import {
  BatchGetSecretValueCommand,
  type SecretsManagerClient,
  type SecretValueEntry,
} from '@aws-sdk/client-secrets-manager';
import { describeError } from '../shared/logger';

/**
 * Every shard of the key registry read in BatchGetSecretValue calls: one module for the functions that read them all
 * (the registry monitor, which measures them, and the secret scanning function, which looks leaked keys up in them).
 */

/** BatchGetSecretValue's most secrets per call. */
export const SHARDS_PER_CALL = 20;

/** One shard's value as Secrets Manager returned it (with its version, when it said), or why it did not. */
export type ShardRead =
  | {
      readonly shard: number;
      readonly ok: true;
      readonly secretString: string;
      /** The version read: what a compare-and-swap write names as the one it replaces. */
      readonly versionId?: string;
    }
  | { readonly shard: number; readonly ok: false; readonly problem: string };

export interface ShardReads {
  /** One per shard id, in shard order. */
  readonly reads: readonly ShardRead[];
  /** BatchGetSecretValue calls made: one per 20 shards. */
  readonly calls: number;
}

/**
 * Whether `id`, as the layout names a shard, is the secret `entry` describes: its complete ARN, its name, or a
 * partial ARN (a secret known by name, whose ARN lacks the "-" and 6 characters Secrets Manager adds).
 */
export function namesSecret(id: string, entry: { readonly ARN?: string; readonly Name?: string }): boolean {
  if (id === entry.ARN || id === entry.Name) return true;
  const arn = entry.ARN;
  return (
    arn !== undefined && id.startsWith('arn:') && arn.startsWith(`${id}-`) && arn.length === id.length + 7
  );
}

function readOf(shard: number, entry: SecretValueEntry): ShardRead {
  return entry.SecretString === undefined
    ? { shard, ok: false, problem: 'the secret holds no SecretString (binary secrets are not supported)' }
    : {
        shard,
        ok: true,
        secretString: entry.SecretString,
        ...(entry.VersionId === undefined ? {} : { versionId: entry.VersionId }),
      };
}

/** One call for up to 20 shards: each gets its value, the error Secrets Manager gave for it, or the call's. */
async function readBatch(
  client: SecretsManagerClient,
  batch: readonly { readonly shard: number; readonly id: string }[],
): Promise<ShardRead[]> {
  let values: SecretValueEntry[];
  let errors: { SecretId?: string; ErrorCode?: string; Message?: string }[];
  try {
    const output = await client.send(
      new BatchGetSecretValueCommand({ SecretIdList: batch.map(({ id }) => id) }),
    );
    values = output.SecretValues ?? [];
    errors = output.Errors ?? [];
  } catch (error) {
    const problem = `BatchGetSecretValue failed: ${describeError(error)}`;
    return batch.map(({ shard }) => ({ shard, ok: false, problem }));
  }
  const unclaimed = [...values];
  return batch.map(({ shard, id }): ShardRead => {
    const found = unclaimed.findIndex((entry) => namesSecret(id, entry));
    if (found !== -1) return readOf(shard, unclaimed.splice(found, 1)[0] ?? {});
    const error = errors.find((candidate) => candidate.SecretId !== undefined && candidate.SecretId === id);
    if (error !== undefined) {
      // The service's own text, cut as every error text in a log line is (describeError).
      const problem = describeError({
        name: error.ErrorCode ?? 'Error',
        message: error.Message ?? 'no message',
      });
      return { shard, ok: false, problem };
    }
    return { shard, ok: false, problem: 'Secrets Manager returned neither its value nor an error for it' };
  });
}

/**
 * Reads every shard, at most 20 per BatchGetSecretValue call (its limit) and `concurrency` calls at a time. A call
 * that fails makes each of its shards unreadable, and the others are still read: one shard's trouble never hides
 * the rest of the registry.
 */
export async function readShards(
  client: SecretsManagerClient,
  shardIds: readonly string[],
  concurrency: number,
): Promise<ShardReads> {
  const batches: { shard: number; id: string }[][] = [];
  shardIds.forEach((id, shard) => {
    if (shard % SHARDS_PER_CALL === 0) batches.push([]);
    batches[batches.length - 1]?.push({ shard, id });
  });
  const reads: ShardRead[] = [];
  for (let start = 0; start < batches.length; start += concurrency) {
    const round = batches.slice(start, start + concurrency);
    for (const batchReads of await Promise.all(round.map((batch) => readBatch(client, batch)))) {
      reads.push(...batchReads);
    }
  }
  return { reads, calls: batches.length };
}
