import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  UpdateSecretVersionStageCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { errorName } from '../../shared/errors';
import { readShards, type ShardRead as ValueRead } from '../read-shards';

/** One shard's current version: its text and the VersionId a compare-and-swap write names. */
export interface ShardSnapshot {
  readonly text: string;
  readonly versionId: string;
}

export type ShardRead =
  | { readonly shard: number; readonly ok: true; readonly snapshot: ShardSnapshot }
  | { readonly shard: number; readonly ok: false; readonly problem: string };

/** The key shards as the secret scanning function reads and writes them; an in-memory one stands in for tests. */
export interface ShardStore {
  /** Every shard, by index; a shard that could not be read says why, and the others are still read. */
  readAll(): Promise<readonly ShardRead[]>;
  /** One shard again, after a write lost a race. */
  readOne(shard: number): Promise<ShardSnapshot>;
  /**
   * Stores `text` as the shard's current version only if `expectedVersion` is still current: `conflict` when another
   * writer moved it since (nothing of ours is current). Throws when the outcome is a failure.
   */
  replace(shard: number, expectedVersion: string, text: string): Promise<'written' | 'conflict'>;
}

/**
 * The staging label this function's compare-and-swap puts on the version it writes until AWSCURRENT moves to it: its
 * own, neither AWSPENDING (a scheduled rotation's) nor the key CLI's.
 */
export const SCANNING_STAGING_LABEL = 'payment-api-leak-pending';

function snapshotOf(entry: { SecretString?: string; VersionId?: string }): ShardSnapshot | string {
  if (entry.SecretString === undefined)
    return 'the secret holds no SecretString (binary secrets are not supported)';
  if (entry.VersionId === undefined) return 'Secrets Manager returned no VersionId';
  return { text: entry.SecretString, versionId: entry.VersionId };
}

export interface SecretsManagerShardStoreOptions {
  readonly client: SecretsManagerClient;
  /** Each shard's secret id (ARN or name), by index. */
  readonly shardIds: readonly string[];
  /** Calls in flight at once. */
  readonly concurrency: number;
  /** Fresh ClientRequestTokens; randomUUID unless a test needs known ones. */
  readonly newToken?: () => string;
}

/** A shard as read by lambda/read-shards.ts, with the version a write must name, or why it cannot be used. */
function shardReadOf(read: ValueRead): ShardRead {
  if (!read.ok) return read;
  const snapshot = snapshotOf({ SecretString: read.secretString, VersionId: read.versionId });
  return typeof snapshot === 'string'
    ? { shard: read.shard, ok: false, problem: snapshot }
    : { shard: read.shard, ok: true, snapshot };
}

/**
 * The shards in Secrets Manager. Reads: BatchGetSecretValue, 20 a call, `concurrency` calls at a time, by the reader
 * the registry monitor uses too (lambda/read-shards.ts). Writes, as the key CLI's compare-and-swap
 * (tools/keys/secrets-manager-store.ts) without its version budget: PutSecretValue under SCANNING_STAGING_LABEL, then UpdateSecretVersionStage moves AWSCURRENT to it with RemoveFromVersionId = the version
 * read, which Secrets Manager refuses if anyone moved AWSCURRENT since; after a refused move, the version now current
 * tells a conflict from a move that landed though its answer was lost, and from a real failure. The label comes off
 * our version either way (best effort), so it never keeps that version from being removed.
 */
export function createSecretsManagerShardStore(options: SecretsManagerShardStoreOptions): ShardStore {
  const { client, shardIds, concurrency } = options;
  const newToken = options.newToken ?? randomUUID;

  const idOf = (shard: number): string => {
    const id = shardIds[shard];
    if (id === undefined) throw new RangeError(`no shard ${shard}`);
    return id;
  };

  async function currentVersionId(secretId: string): Promise<string | undefined> {
    try {
      const output = await client.send(
        new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
      );
      return output.VersionId;
    } catch {
      return undefined;
    }
  }

  async function removeLabel(secretId: string, versionId: string): Promise<void> {
    try {
      await client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: secretId,
          VersionStage: SCANNING_STAGING_LABEL,
          RemoveFromVersionId: versionId,
        }),
      );
    } catch (error) {
      // Not attached (another writer's put took it, or ours never landed): nothing to remove.
      const name = errorName(error);
      if (name !== 'InvalidParameterException' && name !== 'ResourceNotFoundException') throw error;
    }
  }

  return {
    async readAll() {
      const { reads } = await readShards(client, shardIds, concurrency);
      return reads.map(shardReadOf);
    },

    async readOne(shard) {
      const output = await client.send(
        new GetSecretValueCommand({ SecretId: idOf(shard), VersionStage: 'AWSCURRENT' }),
      );
      const snapshot = snapshotOf(output);
      if (typeof snapshot === 'string') throw new Error(snapshot);
      return snapshot;
    },

    async replace(shard, expectedVersion, text) {
      const secretId = idOf(shard);
      const token = newToken();
      let ours = token;
      try {
        const put = await client.send(
          new PutSecretValueCommand({
            SecretId: secretId,
            SecretString: text,
            ClientRequestToken: token,
            VersionStages: [SCANNING_STAGING_LABEL],
          }),
        );
        ours = put.VersionId ?? token;
        try {
          await client.send(
            new UpdateSecretVersionStageCommand({
              SecretId: secretId,
              VersionStage: 'AWSCURRENT',
              MoveToVersionId: ours,
              RemoveFromVersionId: expectedVersion,
            }),
          );
          return 'written';
        } catch (error) {
          const holder = await currentVersionId(secretId);
          if (holder === ours) return 'written';
          if (holder !== undefined && holder !== expectedVersion) return 'conflict';
          throw error;
        }
      } finally {
        // A put whose answer was lost may have stored our version: the label comes off it in every case.
        await removeLabel(secretId, ours).catch(() => undefined);
      }
    },
  };
}
