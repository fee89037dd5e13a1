import { BatchGetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { isKeyPrefix, KEY_PREFIX_RULE } from '../../shared/keys/key-format';
import { shardSlots, singleShardLayout, type RegistryManifest } from '../../shared/keys/registry';
import {
  describeAwsEnvironmentProblem,
  describeAwsFailure,
  describeSecretFailure,
  secretLabel,
} from '../common/aws-failure';
import { AWS_SERVICES, resolvedRegion } from '../common/aws-settings';
import {
  readManifestSecret,
  readRegistryFile,
  shardFilePath,
  stackRegistry,
} from '../common/registry-locator';
import { readStackOutputs, STACK_OUTPUTS, StackReadError, type StackOutputs } from '../common/stack-outputs';
import type { Target } from './cli';
import { CREDENTIALS_HINT } from './credentials-hint';
import { FileStore } from './file-store';
import { KeyStoreError, type KeyStore, type Snapshot } from './key-store';
import { SecretsManagerStore } from './secrets-manager-store';

/**
 * The key registry as the key CLI edits it: a manifest (how many shards, where each is) and one key store per
 * shard. A single secret (`--secret-id`) or key file (`--file`) is a registry of one shard, and then every message
 * names the store exactly as before shards existed.
 */

/** BatchGetSecretValue takes at most 20 secret ids a call. */
export const BATCH_GET_LIMIT = 20;

/** How the CLI reaches a registry's shards; the CLI's own settings seam. */
export interface RegistryClients {
  readonly secretsManager: () => SecretsManagerClient;
  readonly cloudFormation: () => CloudFormationClient;
  readonly now: () => number;
}

export interface Shard {
  readonly index: number;
  /** Secret id (name or ARN) or file path. */
  readonly id: string;
  readonly store: KeyStore;
}

/** A local registry.json: the manifest the CLI itself owns, and so may change (reshard --shards, init). */
export interface ManifestFile {
  readonly path: string;
  readonly store: FileStore;
  /** The manifest as read, with its version for a compare-and-swap write. */
  readonly version: string;
}

export interface Registry {
  readonly kind: 'secrets' | 'files';
  /** Names the registry in messages: `registry <manifest>`, or the one store's own description. */
  readonly description: string;
  readonly manifest: RegistryManifest;
  /** More than one shard slot: messages then name the shard. */
  readonly sharded: boolean;
  readonly manifestFile?: ManifestFile;
  /** The prefix of the stack's keys, from its KeyPrefix output; absent: the stack does not say (or no stack). */
  readonly keyPrefix?: string;
  shard(index: number): Shard;
  /** Reads the given shards: secrets in one call per BATCH_GET_LIMIT (one GetSecretValue for a lone shard). */
  readShards(indices: readonly number[]): Promise<ReadonlyMap<number, Snapshot>>;
}

/** `shard 3 (secret x)`, or the store's description in a registry of one. */
export function shardLabel(registry: Registry, index: number): string {
  const shard = registry.shard(index);
  return registry.sharded
    ? `shard ${index} (${shardStoreName(registry, shard.id)})`
    : shard.store.description;
}

function shardStoreName(registry: Pick<Registry, 'kind'>, id: string): string {
  return registry.kind === 'secrets' ? secretLabel(id) : `file ${id}`;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** What both kinds share: their shards by index, and one read per shard where no batch applies. */
abstract class ShardList {
  abstract readonly description: string;
  protected abstract readonly shards: readonly Shard[];

  shard(index: number): Shard {
    const shard = this.shards[index];
    if (shard === undefined) throw new KeyStoreError(`${this.description} has no shard ${index}`);
    return shard;
  }

  protected async readEach(indices: readonly number[]): Promise<Map<number, Snapshot>> {
    const read = new Map<number, Snapshot>();
    for (const index of indices) read.set(index, await this.shard(index).store.read());
    return read;
  }
}

class SecretsRegistry extends ShardList implements Registry {
  readonly kind = 'secrets';
  readonly sharded: boolean;
  protected readonly shards: Shard[];

  constructor(
    readonly description: string,
    readonly manifest: RegistryManifest,
    private readonly client: SecretsManagerClient,
    now: () => number,
    readonly keyPrefix?: string,
  ) {
    super();
    this.sharded = shardSlots(manifest) > 1;
    this.shards = manifest.shardIds.map((id, index) => ({
      index,
      id,
      store: new SecretsManagerStore(
        id,
        client,
        undefined,
        now,
        this.sharded ? `shard ${index} (${secretLabel(id)})` : undefined,
      ),
    }));
  }

  async readShards(indices: readonly number[]): Promise<ReadonlyMap<number, Snapshot>> {
    if (indices.length === 1) return this.readEach(indices);
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

class FilesRegistry extends ShardList implements Registry {
  readonly kind = 'files';
  readonly sharded: boolean;
  protected readonly shards: Shard[];

  constructor(
    readonly description: string,
    readonly manifest: RegistryManifest,
    readonly manifestFile: ManifestFile | undefined,
  ) {
    super();
    this.sharded = shardSlots(manifest) > 1 || manifestFile !== undefined;
    this.shards = manifest.shardIds.map((id, index) => {
      const path = manifestFile === undefined ? id : shardFilePath(manifestFile.path, id);
      return {
        index,
        id: path,
        store: new FileStore(path, this.sharded ? { description: `shard ${index} (file ${path})` } : {}),
      };
    });
  }

  readShards(indices: readonly number[]): Promise<ReadonlyMap<number, Snapshot>> {
    return this.readEach(indices);
  }
}

/** Reads a local registry.json; throws KeyStoreError naming it. */
export async function readManifestFile(path: string): Promise<ManifestFile & { manifest: RegistryManifest }> {
  const store = new FileStore(path, { description: `registry file ${path}` });
  const reading = await readRegistryFile(path);
  if (!reading.ok) throw new KeyStoreError(reading.problem);
  const { version } = await store.read();
  return { path, store, version, manifest: reading.manifest };
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

/** The registry a target names. Reads the stack and the manifest where it has to; shards are read later. */
export async function openRegistry(
  target: Target,
  clients: RegistryClients,
  /** A local registry as a change of its manifest would make it (what reshard --shards --dry-run plans on). */
  asIf?: (manifest: RegistryManifest) => RegistryManifest,
): Promise<Registry> {
  switch (target.kind) {
    case 'file':
      return new FilesRegistry(`key file ${target.path}`, singleShardLayout(target.path), undefined);
    case 'registry-file': {
      const { manifest, ...manifestFile } = await readManifestFile(target.path);
      return new FilesRegistry(`registry file ${target.path}`, asIf?.(manifest) ?? manifest, manifestFile);
    }
    case 'stack': {
      const outputs = await readStackOutputs(clients.cloudFormation(), target.stackName);
      const found = stackRegistry(target.stackName, outputs);
      return openSecrets(found, clients, stackKeyPrefix(target.stackName, outputs));
    }
    default:
      return openSecrets(target, clients);
  }
}

/** A single secret, or the registry a manifest secret describes (read here). */
async function openSecrets(
  named: { readonly secretId: string } | { readonly manifestId: string },
  clients: RegistryClients,
  keyPrefix?: string,
): Promise<Registry> {
  const client = clients.secretsManager();
  if ('secretId' in named) {
    const layout = singleShardLayout(named.secretId);
    return new SecretsRegistry(secretLabel(named.secretId), layout, client, clients.now, keyPrefix);
  }
  const manifest = await readManifestSecret(client, named.manifestId, CREDENTIALS_HINT);
  return new SecretsRegistry(`registry ${named.manifestId}`, manifest, client, clients.now, keyPrefix);
}
