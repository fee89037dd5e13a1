import { BatchGetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { isKeyPrefix, KEY_PREFIX_RULE } from '../../shared/keys/key-format';
import { shardSlots, singleShardLayout, type RegistryManifest } from '../../shared/keys/registry';
import {
  describeAwsEnvironmentProblem,
  describeAwsFailure,
  describeSecretFailure,
  secretLabel,
} from '../common/aws-failure';
import { AWS_SERVICES, resolvedRegion } from '../common/aws-settings';
import { readManifestSecret, stackRegistry } from '../common/registry-locator';
import { readStackOutputs, STACK_OUTPUTS, StackReadError, type StackOutputs } from '../common/stack-outputs';
import type { Target } from './cli';
import { KeyStoreError, type Snapshot } from './key-store';
import { BATCH_GET_LIMIT, chunks, ShardList, type Registry, type RegistryClients } from './registry-access';
import { CREDENTIALS_HINT, SecretsManagerStore } from './secrets-manager-store';

/*
 * The key registry in Secrets Manager, as the key CLI edits it: registry-access.ts loads this module only for a
 * target in AWS (a stack, a manifest secret or one secret), so the CLI on local files never loads the SDK.
 */

/** The registry a target in AWS names. Reads the stack and the manifest where it has to; shards are read later. */
export async function openSecretsRegistry(
  target: Extract<Target, { kind: 'stack' | 'registry' | 'secret' }>,
  clients: RegistryClients,
): Promise<Registry> {
  if (target.kind !== 'stack') return openSecrets(target, clients);
  const outputs = await readStackOutputs(await clients.cloudFormation(), target.stackName);
  const found = stackRegistry(target.stackName, outputs);
  return openSecrets(found, clients, stackKeyPrefix(target.stackName, outputs));
}

/** A single secret, or the registry a manifest secret describes (read here). */
async function openSecrets(
  named: { readonly secretId: string } | { readonly manifestId: string },
  clients: RegistryClients,
  keyPrefix?: string,
): Promise<Registry> {
  const client = await clients.secretsManager();
  if ('secretId' in named) {
    const layout = singleShardLayout(named.secretId);
    return new SecretsRegistry(secretLabel(named.secretId), layout, client, clients.now, keyPrefix);
  }
  const manifest = await readManifestSecret(client, named.manifestId, CREDENTIALS_HINT);
  return new SecretsRegistry(`registry ${named.manifestId}`, manifest, client, clients.now, keyPrefix);
}

/** The stack's KeyPrefix output, checked; undefined when it has none (a stack deployed before key prefixes). */
function stackKeyPrefix(stackName: string, outputs: StackOutputs): string | undefined {
  const prefix = outputs.values.get(STACK_OUTPUTS.keyPrefix);
  if (prefix !== undefined && !isKeyPrefix(prefix)) {
    throw new StackReadError(
      `stack ${stackName} has a KeyPrefix output that is not a key prefix (${KEY_PREFIX_RULE})`,
    );
  }
  return prefix;
}

class SecretsRegistry extends ShardList implements Registry {
  constructor(
    readonly description: string,
    readonly manifest: RegistryManifest,
    private readonly client: SecretsManagerClient,
    now: () => number,
    readonly keyPrefix?: string,
  ) {
    super(
      'secrets',
      manifest.shardIds,
      shardSlots(manifest) > 1,
      (id, description) => new SecretsManagerStore(id, client, undefined, now, description),
    );
  }

  override async readShards(indices: readonly number[]): Promise<ReadonlyMap<number, Snapshot>> {
    if (indices.length === 1) return super.readShards(indices);
    const read = new Map<number, Snapshot>();
    for (const batch of chunks(indices, BATCH_GET_LIMIT)) {
      for (const [index, snapshot] of await this.batchRead(batch)) read.set(index, snapshot);
    }
    return read;
  }

  /**
   * One BatchGetSecretValue for up to 20 shards. A value that does not come back as AWSCURRENT (moto answers from
   * a version it remembers as its default, which a compare-and-swap move does not update) or does not come back
   * at all is read again on its own with GetSecretValue(AWSCURRENT), so the CLI never edits a stale copy.
   */
  private async batchRead(indices: readonly number[]): Promise<Map<number, Snapshot>> {
    const ids = indices.map((index) => this.shard(index).id);
    const output = await this.batchGet(indices, ids);
    const read = new Map<number, Snapshot>();
    for (const value of output.SecretValues ?? []) {
      const position = ids.findIndex((id) => id === value.ARN || id === value.Name);
      const index = indices[position];
      if (index === undefined) continue;
      const current = (value.VersionStages ?? []).includes('AWSCURRENT');
      if (!current || value.SecretString === undefined || value.VersionId === undefined) continue;
      read.set(index, { text: value.SecretString, version: value.VersionId });
    }
    for (const index of indices) {
      if (!read.has(index)) read.set(index, await this.shard(index).store.read());
    }
    return read;
  }

  /** The call itself; a failure, of the call or of one secret in it, is one line naming the shard. */
  private async batchGet(indices: readonly number[], ids: readonly string[]) {
    let output;
    try {
      output = await this.client.send(new BatchGetSecretValueCommand({ SecretIdList: [...ids] }));
    } catch (error) {
      const shards = indices.length === 1 ? `shard ${ids[0]}` : `${indices.length} shards`;
      throw new KeyStoreError(
        describeAwsEnvironmentProblem(error, CREDENTIALS_HINT) ??
          `could not read ${shards} of ${this.description}: ` +
            describeAwsFailure(error, AWS_SERVICES.secretsManager, await resolvedRegion(this.client)),
      );
    }
    const [failure] = output.Errors ?? [];
    if (failure === undefined) return output;
    const index = indices[ids.indexOf(failure.SecretId ?? '')] ?? indices[0] ?? 0;
    const error = { name: failure.ErrorCode ?? 'Error', message: failure.Message ?? '' };
    throw new KeyStoreError(
      `shard ${index}: ${describeSecretFailure(error, 'could not read', {
        secretId: this.shard(index).id,
        region: await resolvedRegion(this.client),
      })}`,
    );
  }
}
