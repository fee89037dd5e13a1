import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { shardSlots, singleShardLayout, type RegistryManifest } from '../../shared/keys/registry';
import { secretLabel } from '../common/aws-failure';
import { readRegistryFile, shardFilePath } from '../common/registry-file';
import type { Target } from './cli';
import { FileStore } from './file-store';
import { KeyStoreError, type KeyStore, type Snapshot } from './key-store';

/**
 * The key registry as the key CLI edits it: a manifest (how many shards, where each is) and one key store per
 * shard. A single secret (`--secret-id`) or key file (`--file`) is a registry of one shard, and then every message
 * names the store exactly as before shards existed.
 */

/** BatchGetSecretValue takes at most 20 secret ids a call. */
export const BATCH_GET_LIMIT = 20;

/** `items` in runs of at most `size`: shards BATCH_GET_LIMIT to a read. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const result: T[][] = [];
  for (let start = 0; start < items.length; start += size) result.push(items.slice(start, start + size));
  return result;
}

/** How the CLI reaches a registry's shards; the CLI's own settings seam. */
export interface RegistryClients {
  readonly secretsManager: () => Promise<SecretsManagerClient>;
  readonly cloudFormation: () => Promise<CloudFormationClient>;
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
  /** A stack's secrets, or the local server's key files: each reads its default rate limit elsewhere. */
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

/** `shard 3 (secret x)`, or the store's own description in a registry of one: ShardList names each store so. */
export function shardLabel(registry: Registry, index: number): string {
  return registry.shard(index).store.description;
}

/**
 * What both kinds share: a store per shard id, named by its shard in a registry of several, and one read per
 * shard where no batch applies.
 */
export abstract class ShardList {
  abstract readonly description: string;
  private readonly shards: readonly Shard[];

  constructor(
    readonly kind: Registry['kind'],
    ids: readonly string[],
    readonly sharded: boolean,
    storeOf: (id: string, description: string | undefined) => KeyStore,
  ) {
    this.shards = ids.map((id, index) => {
      const name = kind === 'secrets' ? secretLabel(id) : `file ${id}`;
      const description = sharded ? `shard ${index} (${name})` : undefined;
      return { index, id, store: storeOf(id, description) };
    });
  }

  shard(index: number): Shard {
    const shard = this.shards[index];
    if (shard === undefined) throw new KeyStoreError(`${this.description} has no shard ${index}`);
    return shard;
  }

  async readShards(indices: readonly number[]): Promise<ReadonlyMap<number, Snapshot>> {
    const read = new Map<number, Snapshot>();
    for (const index of indices) read.set(index, await this.shard(index).store.read());
    return read;
  }
}

class FilesRegistry extends ShardList implements Registry {
  constructor(
    readonly description: string,
    readonly manifest: RegistryManifest,
    readonly manifestFile: ManifestFile | undefined,
  ) {
    super(
      'files',
      manifest.shardIds.map((id) => (manifestFile === undefined ? id : shardFilePath(manifestFile.path, id))),
      shardSlots(manifest) > 1 || manifestFile !== undefined,
      (path, description) => new FileStore(path, description === undefined ? {} : { description }),
    );
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
    default: {
      // Only a registry in Secrets Manager loads the SDK: the CLI on a key file starts without it.
      const { openSecretsRegistry } = await import('./secrets-registry');
      return openSecretsRegistry(target, clients);
    }
  }
}
