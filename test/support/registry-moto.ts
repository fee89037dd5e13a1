/**
 * Key registries in moto, as the stack makes them (docs/keys.md, "The key registry"): shard 0 under any name (the
 * stack's original keys secret), shards 1.. named `payment-api/<stack>/keys/shard-<i>`, the manifest secret
 * `<prefix>registry` (when the registry has more than one shard), and, given a CloudFormation client, a stack whose
 * outputs name them. With it: the payment Lambda's environment for the registry, as the stack sets it, and what a
 * deploy that changes the shard count does. The one module for moto registries: the runtime's tests, the key CLI's,
 * the local server's and the bench all build theirs here.
 */
import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { CreateStackCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { parseKeyDocument, type KeyDocument } from '../../shared/keys/key-document';
import {
  REGISTRY_ENV,
  registryManifestName,
  registryNamePrefix,
  secretRegistryLayout,
  serializeRegistryManifest,
  shardSlots,
  type RegistryLayout,
  type RegistryManifest,
} from '../../shared/keys/registry';
import { errorName } from '../../shared/errors';
import { createSecret, motoSecretsManager, type MotoServer } from './moto';

/** Clients of the test process, pointed at moto; with CloudFormation, the registry gets a stack too. */
export interface MotoClients {
  readonly secretsManager: SecretsManagerClient;
  readonly cloudFormation?: CloudFormationClient;
}

export interface MotoRegistry {
  readonly stackName: string;
  /** `payment-api/<stack>/keys/`: shard i (from 1) is `<prefix>shard-<i>`. */
  readonly namePrefix: string;
  /** The manifest secret's name; the secret exists when the layout names more than one shard. */
  readonly manifestName: string;
  /** What the manifest holds: the layout and the key cache TTL a reshard waits for. */
  readonly manifest: RegistryManifest;
  readonly layout: RegistryLayout;
  /** The payment Lambda's environment for it: KEYS_SECRET_ID and, with several shards, KEY_SHARDS and the rest. */
  readonly env: Readonly<Record<string, string>>;
}

export interface MotoRegistryOptions {
  readonly shards: number;
  readonly previousShards?: number;
  /** Each shard's text, by index, for every slot either count uses; default `{}` each. */
  readonly texts?: readonly string[];
  /** Default: a fresh `payment-api-<8 hex>`, so registries in one moto never meet. */
  readonly stackName?: string;
  /** What the manifest says the Lambda's key cache TTL is. Default 60 (the stack's default). */
  readonly keyCacheTtlSeconds?: number;
  /** More outputs of the stack (`KeyPrefix`, say). */
  readonly extraOutputs?: Readonly<Record<string, string>>;
}

/** The payment Lambda's environment for a layout, as the stack sets it (lib/payment-function.ts). */
export function registryEnv(layout: RegistryLayout, namePrefix: string): Readonly<Record<string, string>> {
  const env: Record<string, string> = { [REGISTRY_ENV.shardZero]: layout.shardIds[0] ?? '' };
  if (shardSlots(layout) > 1) {
    env[REGISTRY_ENV.shards] = String(layout.shards);
    env[REGISTRY_ENV.namePrefix] = namePrefix;
    if (layout.previousShards !== undefined) env[REGISTRY_ENV.previousShards] = String(layout.previousShards);
  }
  return env;
}

/** A stack in moto holding only `outputs` (and the one resource CloudFormation requires), as a deploy leaves them. */
export async function createMotoStack(
  client: CloudFormationClient,
  name: string,
  outputs: Readonly<Record<string, string>>,
): Promise<void> {
  const template = {
    Resources: { Placeholder: { Type: 'AWS::CloudFormation::WaitConditionHandle' } },
    Outputs: Object.fromEntries(Object.entries(outputs).map(([key, value]) => [key, { Value: value }])),
  };
  try {
    await client.send(new CreateStackCommand({ StackName: name, TemplateBody: JSON.stringify(template) }));
  } catch (error) {
    // The name is fresh: a stack that has it already is this create's own, landed although its answer was lost.
    if (errorName(error) !== 'AlreadyExistsException') throw error;
  }
}

function registryOf(stackName: string, manifest: RegistryManifest): MotoRegistry {
  const namePrefix = registryNamePrefix(stackName);
  const layout: RegistryLayout = {
    shards: manifest.shards,
    ...(manifest.previousShards === undefined ? {} : { previousShards: manifest.previousShards }),
    shardIds: manifest.shardIds,
  };
  return {
    stackName,
    namePrefix,
    manifestName: registryManifestName(namePrefix),
    manifest,
    layout,
    env: registryEnv(layout, namePrefix),
  };
}

async function withClients<T>(
  target: MotoServer | MotoClients,
  use: (clients: MotoClients) => Promise<T>,
): Promise<T> {
  if ('secretsManager' in target) return use(target);
  const secretsManager = motoSecretsManager(target);
  try {
    return await use({ secretsManager });
  } finally {
    secretsManager.destroy();
  }
}

/**
 * Creates a registry's secrets in moto (given the server, with a client of its own; given clients, a stack as well
 * when one of them is CloudFormation's), each shard holding its text.
 */
export function createMotoRegistry(
  target: MotoServer | MotoClients,
  options: MotoRegistryOptions,
): Promise<MotoRegistry> {
  return withClients(target, async ({ secretsManager, cloudFormation }) => {
    const { shards, previousShards, texts } = options;
    const stackName = options.stackName ?? `payment-api-${randomUUID().slice(0, 8)}`;
    const namePrefix = registryNamePrefix(stackName);
    const slots = shardSlots({ shards, ...(previousShards === undefined ? {} : { previousShards }) });
    if (texts !== undefined && texts.length !== slots) {
      throw new Error(`a registry of ${slots} shard slots needs ${slots} texts, got ${texts.length}`);
    }
    const shardZeroId = await createSecret(secretsManager, `${stackName}-keys`, texts?.[0] ?? '{}');
    const layout = secretRegistryLayout({
      shardZeroId,
      namePrefix,
      shards,
      ...(previousShards === undefined ? {} : { previousShards }),
    });
    for (const [index, id] of layout.shardIds.entries()) {
      if (index > 0) await createSecret(secretsManager, id, texts?.[index] ?? '{}');
    }
    const registry = registryOf(stackName, {
      ...layout,
      keyCacheTtlSeconds: options.keyCacheTtlSeconds ?? 60,
    });
    if (slots > 1) {
      await createSecret(secretsManager, registry.manifestName, serializeRegistryManifest(registry.manifest));
    }
    if (cloudFormation !== undefined) {
      const outputs: Record<string, string> = {
        PaymentUrl: 'https://example.invalid/prod/payment',
        KeysSecretArn: shardZeroId,
      };
      if (slots > 1) {
        Object.assign(outputs, {
          KeyRegistry: registry.manifestName,
          KeyShards: String(shards),
          KeyShardNamePrefix: namePrefix,
        });
      }
      await createMotoStack(cloudFormation, stackName, { ...outputs, ...options.extraOutputs });
    }
    return registry;
  });
}

/**
 * What a deploy with `-c keyShards=<shards>` (and `-c keyShardsPrevious=<previous>`) does to the registry: creates
 * the shards it lacks (empty) and writes the manifest (the stack's outputs already name it; a registry that had one
 * shard gets its manifest secret now, though its moto stack's outputs are not updated). Returns the registry as the
 * deploy leaves it, with the Lambda's new environment.
 */
export async function deployShards(
  client: SecretsManagerClient,
  registry: MotoRegistry,
  shards: number,
  previousShards?: number,
): Promise<MotoRegistry> {
  const layout = secretRegistryLayout({
    shardZeroId: registry.layout.shardIds[0] ?? '',
    namePrefix: registry.namePrefix,
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
  });
  for (const id of layout.shardIds.slice(registry.layout.shardIds.length))
    await createSecret(client, id, '{}');
  const deployed = registryOf(registry.stackName, {
    ...layout,
    ...(registry.manifest.keyCacheTtlSeconds === undefined
      ? {}
      : { keyCacheTtlSeconds: registry.manifest.keyCacheTtlSeconds }),
  });
  const text = serializeRegistryManifest(deployed.manifest);
  if (shardSlots(registry.layout) > 1) {
    await client.send(new PutSecretValueCommand({ SecretId: deployed.manifestName, SecretString: text }));
  } else {
    await createSecret(client, deployed.manifestName, text);
  }
  return deployed;
}

/** Every shard's document as AWSCURRENT holds it, by index. */
export async function shardDocuments(
  client: SecretsManagerClient,
  layout: Pick<RegistryLayout, 'shardIds'>,
): Promise<Map<number, KeyDocument>> {
  const documents = new Map<number, KeyDocument>();
  for (const [index, id] of layout.shardIds.entries()) {
    const output = await client.send(new GetSecretValueCommand({ SecretId: id, VersionStage: 'AWSCURRENT' }));
    documents.set(index, parseKeyDocument(output.SecretString ?? '{}'));
  }
  return documents;
}
