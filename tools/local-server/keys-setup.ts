import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DEMO_APP_ID } from '../../shared/keys/app-id';
import { shardOf } from '../../shared/keys/shard';
import {
  parseRegistryManifest,
  shardsToSearch,
  type RegistryLayout,
  type RegistryManifest,
} from '../../shared/keys/registry';
import { errorCode } from '../../shared/errors';
import type { Logger } from '../../shared/logger';
import { KeyCache, type KeyringProvider, type SecretSource } from '../../lambda/payment/key-cache';
import {
  createPaymentSecretsManagerClient,
  secretsManagerSource,
} from '../../lambda/payment/secrets-manager-source';
import type { AwsJsonClient } from '../../shared/aws/aws-json-client';
import { AWS_JSON_SERVICES } from '../../shared/aws/aws-environment';
import { localAwsAccess } from './aws-access';
import type { KeyCacheSettings } from '../../lambda/payment/settings';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../common/aws-clients';
import { readManifestSecret, shardFilePath, stackRegistry } from '../common/registry-locator';
import { readStackOutputs } from '../common/stack-outputs';
import type { Env } from '../common/tool-io';
import { shellQuoted, type BannerKeys, type RegistryFacts } from './banner';
import { fileSource } from './file-source';
import { KeyFileRefusedError, readKeyFile } from './read-key-file';
import { ensureKeysFile, keysFilePermissionWarning } from './keys-file';
import type { KeysLocation } from './local-settings';
import { RegistryKeys } from './registry-keys';
import { watchKeyFiles, watchKeysFile } from './watch-keys-file';

/**
 * The local server's keys, wherever they are: its key file (created with a key for app demo when missing, and
 * watched), one Secrets Manager secret (as before shards), or a registry of shards, read through the payment
 * Lambda's ShardedKeys: a local registry.json and its shard files (watched, each file picked up at once), a manifest
 * secret, or a deployed stack's outputs (its registry, or its one keys secret).
 */

export interface KeysSetup {
  readonly keys: KeyringProvider;
  /** What the banner says of them. */
  readonly banner: BannerKeys;
  /** Set only when the key file was just created with this key. */
  readonly generated?: { readonly appId: string; readonly key: string };
  /** Whether changes to the files are picked up at once. */
  readonly watched: boolean;
  /** Lines for the operator before the banner (a file others can read, a TTL longer than the registry's). */
  readonly warnings: readonly string[];
  /** Stops watching. */
  close(): void;
}

export interface KeysSetupOptions {
  readonly location: KeysLocation;
  readonly cache: KeyCacheSettings;
  readonly env: Env;
  readonly logger: Logger;
  /** The prefix of a demo key generated into a new key file. Default: the default prefix. */
  readonly keyPrefix?: string;
}

/** Nothing to stop: keys in Secrets Manager are not watched. */
const notWatched = (): void => undefined;

async function permissionWarnings(paths: readonly string[]): Promise<string[]> {
  const warnings = await Promise.all(
    paths.map((path) => keysFilePermissionWarning(path).catch(() => undefined)),
  );
  return warnings.filter((warning): warning is string => warning !== undefined);
}

async function keyFile(path: string, { cache, logger, keyPrefix }: KeysSetupOptions): Promise<KeysSetup> {
  const setup = await ensureKeysFile(path, keyPrefix);
  // A FIFO, a device, a directory or an oversized file in its place stops the start in one line; later, while the
  // server runs, the same is refused at each read and the keys already read are served (the key cache's rules).
  await readKeyFile(path).catch((error: unknown) => {
    if (error instanceof KeyFileRefusedError) throw error;
  });
  const warnings = setup.created ? [] : await permissionWarnings([path]);
  const keys = new KeyCache({ source: fileSource(path), logger, ...cache });
  keys.warm();
  // A key added with the key CLI works at once: the file is read again as soon as it changes (the TTL's re-read
  // stays, should a change go unseen).
  const watch = watchKeysFile(
    path,
    () => {
      keys.reload();
    },
    logger,
  );
  return {
    keys,
    banner: { kind: 'file', path },
    ...(setup.created ? { generated: { appId: setup.appId, key: setup.key } } : {}),
    watched: true,
    warnings,
    close: () => {
      watch.close();
    },
  };
}

/** The payment Lambda's Secrets Manager client, as npm start gives it its region and credentials. */
function paymentClient(env: Env): AwsJsonClient {
  return createPaymentSecretsManagerClient(localAwsAccess(env, AWS_JSON_SERVICES.secretsManager));
}

function oneSecret(secretId: string, stackName: string | undefined, options: KeysSetupOptions): KeysSetup {
  const { cache, env, logger } = options;
  // The Lambda's own client and bounds; the region and credentials from the SDK's full chain (profiles, SSO).
  const source = secretsManagerSource(secretId, paymentClient(env));
  const keys = new KeyCache({ source, logger, ...cache });
  keys.warm();
  return {
    keys,
    banner: { kind: 'secretsManager', secretId, ...(stackName === undefined ? {} : { stackName }) },
    watched: false,
    warnings: [],
    close: notWatched,
  };
}

function layoutOf(manifest: RegistryManifest, shardId: (id: string) => string = (id) => id): RegistryLayout {
  return {
    shards: manifest.shards,
    ...(manifest.previousShards === undefined ? {} : { previousShards: manifest.previousShards }),
    shardIds: manifest.shardIds.map(shardId),
  };
}

/** App demo's shard: the first in search order that holds it (`holds` reads it), else its home. */
async function demoShard(
  layout: RegistryLayout,
  holds: (id: string) => Promise<boolean>,
): Promise<{ readonly shard: number; readonly present: boolean }> {
  for (const shard of shardsToSearch(layout, DEMO_APP_ID)) {
    if (await holds(layout.shardIds[shard] ?? '')) return { shard, present: true };
  }
  return { shard: shardOf(DEMO_APP_ID, layout.shards), present: false };
}

function factsOf(layout: RegistryLayout, demo: { readonly shard: number; readonly present?: boolean }) {
  const facts: RegistryFacts = {
    shards: layout.shards,
    ...(layout.previousShards === undefined ? {} : { previousShards: layout.previousShards }),
    demo: { shard: demo.shard, id: layout.shardIds[demo.shard] ?? '' },
    ...(demo.present === undefined ? {} : { demoPresent: demo.present }),
  };
  return facts;
}

async function fileHoldsDemo(path: string): Promise<boolean> {
  try {
    const document: unknown = JSON.parse(await readKeyFile(path));
    return typeof document === 'object' && document !== null && Object.hasOwn(document, DEMO_APP_ID);
  } catch {
    return false;
  }
}

async function registryFile(path: string, options: KeysSetupOptions): Promise<KeysSetup> {
  const { cache, logger } = options;
  const read = async (): Promise<RegistryLayout> => {
    // Read as a key file is (a regular file, bounded, with a deadline): a FIFO here would hang the start.
    const text = await readKeyFile(path, { what: 'registry file' }).catch((error: unknown) => {
      if (errorCode(error) !== 'ENOENT') throw error;
      throw new Error(
        `registry file ${path} does not exist: npm run keys -- init --shards <n> --registry-file ${shellQuoted(path)} creates one`,
      );
    });
    const reading = parseRegistryManifest(text);
    if (!reading.ok) throw new Error(`${reading.problem} (registry file ${path})`);
    return layoutOf(reading.manifest, (id) => shardFilePath(path, id));
  };
  const readAt = Date.now();
  const layout = await read();
  const filesOf = (current: RegistryLayout): string[] => [path, ...current.shardIds];
  const keys = new RegistryKeys({
    layout,
    layoutReadAt: readAt,
    readLayout: read,
    description: path,
    sourceFor: (_index, id) => fileSource(id),
    logger,
    ...cache,
    onLayoutChange: (next) => {
      watch.update(filesOf(next));
    },
  });
  // Each file is read again as soon as it changes, registry.json included (reshard --shards rewrites it): the
  // changes of one directory come in the order they were made, so a copy is seen before the removal that follows it.
  const watch = watchKeyFiles(
    filesOf(layout),
    (changed) => {
      if (changed === path) keys.reloadLayout();
      else keys.reloadShard(changed);
    },
    logger,
    'the registry files',
  );
  return {
    keys,
    banner: { kind: 'registryFile', path, registry: factsOf(layout, await demoShard(layout, fileHoldsDemo)) },
    watched: true,
    warnings: await permissionWarnings(filesOf(layout)),
    close: () => {
      watch.close();
    },
  };
}

async function secretsRegistry(
  manifestId: string,
  stackName: string | undefined,
  operatorClient: SecretsManagerClient,
  options: KeysSetupOptions,
): Promise<KeysSetup> {
  const { cache, env, logger } = options;
  const readAt = Date.now();
  const manifest = await readManifestSecret(operatorClient, manifestId);
  const layout = layoutOf(manifest);
  const shardClient = paymentClient(env);
  const keys = new RegistryKeys({
    layout,
    layoutReadAt: readAt,
    readLayout: async () => layoutOf(await readManifestSecret(operatorClient, manifestId)),
    description: manifestId,
    sourceFor: (_index, id): SecretSource => secretsManagerSource(id, shardClient),
    logger,
    ...cache,
  });
  const ttlSeconds = cache.ttlMs / 1000;
  const registryTtl = manifest.keyCacheTtlSeconds;
  // A reshard waits the manifest's TTL (plus a margin) before it removes old copies: a reader holding keys longer
  // may refuse an app it has not seen move.
  const warnings =
    registryTtl !== undefined && ttlSeconds > registryTtl
      ? [
          `warning: KEY_CACHE_TTL_SECONDS is ${ttlSeconds} s, longer than the ${registryTtl} s the registry's manifest ` +
            `gives its readers: during a reshard this server may refuse apps it has not seen move; set it to ${registryTtl} or less`,
        ]
      : [];
  return {
    keys,
    banner: {
      kind: 'registry',
      manifestId,
      ...(stackName === undefined ? {} : { stackName }),
      registry: factsOf(layout, { shard: shardOf(DEMO_APP_ID, layout.shards) }),
    },
    watched: false,
    warnings,
    close: notWatched,
  };
}

/** Finds the keys, reads what says where they are, and starts reading them. Throws one line on failure. */
export async function setUpKeys(options: KeysSetupOptions): Promise<KeysSetup> {
  const { location, env } = options;
  switch (location.kind) {
    case 'file':
      return keyFile(location.path, options);
    case 'secretsManager':
      return oneSecret(location.secretId, undefined, options);
    case 'registryFile':
      return registryFile(location.path, options);
    case 'registry':
      return secretsRegistry(
        location.manifestId,
        undefined,
        createOperatorSecretsManagerClient(env),
        options,
      );
    case 'stack': {
      const operatorClient = createOperatorSecretsManagerClient(env);
      const outputs = await readStackOutputs(
        createOperatorCloudFormationClient(operatorClient, env),
        location.stackName,
      );
      const found = stackRegistry(location.stackName, outputs);
      return found.kind === 'manifest'
        ? secretsRegistry(found.manifestId, location.stackName, operatorClient, options)
        : oneSecret(found.secretId, location.stackName, options);
    }
  }
}
