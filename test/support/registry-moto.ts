/**
 * Key registries of several shards in moto, as the stack makes them (docs/keys.md, "The key registry"): shard 0
 * under any name, shards 1.. named `<prefix>shard-<i>`, the manifest secret `<prefix>registry`, and a
 * CloudFormation stack whose outputs name them.
 */
import { randomUUID } from 'node:crypto';
import {
  CreateSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { CreateStackCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { parseKeyDocument, type KeyDocument } from '../../shared/keys/key-document';
import {
  registryManifestName,
  registryNamePrefix,
  secretRegistryLayout,
  serializeRegistryManifest,
  shardSlots,
  type RegistryManifest,
} from '../../shared/keys/registry';
import { errorName } from '../../shared/errors';

export interface MotoRegistry {
  readonly stackName: string;
  readonly manifestName: string;
  readonly manifest: RegistryManifest;
}

async function createSecret(client: SecretsManagerClient, name: string, text: string): Promise<string> {
  const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: text }));
  return created.ARN ?? name;
}

async function createStack(
  client: CloudFormationClient,
  name: string,
  outputs: Readonly<Record<string, string>>,
) {
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

/** A stack with `shards` empty shards (or none: a stack of one keys secret, as before shards). */
export async function createMotoRegistry(
  clients: { readonly secretsManager: SecretsManagerClient; readonly cloudFormation: CloudFormationClient },
  shards: number,
  options: { readonly keyCacheTtlSeconds?: number; readonly shardZeroText?: string } = {},
): Promise<MotoRegistry> {
  const stackName = `payment-api-${randomUUID().slice(0, 8)}`;
  const prefix = registryNamePrefix(stackName);
  const shardZeroId = await createSecret(
    clients.secretsManager,
    `${stackName}-keys`,
    options.shardZeroText ?? '{}',
  );
  const layout = secretRegistryLayout({ shardZeroId, namePrefix: prefix, shards });
  for (const id of layout.shardIds.slice(1)) await createSecret(clients.secretsManager, id, '{}');
  const manifest: RegistryManifest = { ...layout, keyCacheTtlSeconds: options.keyCacheTtlSeconds ?? 60 };
  const manifestName = registryManifestName(prefix);
  const outputs: Record<string, string> = {
    PaymentUrl: 'https://example.invalid/prod/payment',
    KeysSecretArn: shardZeroId,
  };
  if (shards > 1) {
    await createSecret(clients.secretsManager, manifestName, serializeRegistryManifest(manifest));
    Object.assign(outputs, {
      KeyRegistry: manifestName,
      KeyShards: String(shards),
      KeyShardNamePrefix: prefix,
    });
  }
  await createStack(clients.cloudFormation, stackName, outputs);
  return { stackName, manifestName, manifest };
}

/**
 * What a deploy with `-c keyShards=<shards> -c keyShardsPrevious=<previous>` does to the registry: creates the
 * shards it lacks and rewrites the manifest (the stack's outputs name the same manifest).
 */
export async function deployShards(
  client: SecretsManagerClient,
  registry: MotoRegistry,
  shards: number,
  previousShards?: number,
): Promise<MotoRegistry> {
  const prefix = registryNamePrefix(registry.stackName);
  const layout = secretRegistryLayout({
    shardZeroId: registry.manifest.shardIds[0] ?? '',
    namePrefix: prefix,
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
  });
  for (const id of layout.shardIds.slice(shardSlots(registry.manifest))) await createSecret(client, id, '{}');
  const manifest: RegistryManifest = {
    ...layout,
    ...(registry.manifest.keyCacheTtlSeconds === undefined
      ? {}
      : { keyCacheTtlSeconds: registry.manifest.keyCacheTtlSeconds }),
  };
  await client.send(
    new PutSecretValueCommand({
      SecretId: registry.manifestName,
      SecretString: serializeRegistryManifest(manifest),
    }),
  );
  return { ...registry, manifest };
}

/** Every shard's document as AWSCURRENT holds it, by index. */
export async function shardDocuments(
  client: SecretsManagerClient,
  manifest: Pick<RegistryManifest, 'shardIds'>,
): Promise<Map<number, KeyDocument>> {
  const documents = new Map<number, KeyDocument>();
  for (const [index, id] of manifest.shardIds.entries()) {
    const output = await client.send(new GetSecretValueCommand({ SecretId: id, VersionStage: 'AWSCURRENT' }));
    documents.set(index, parseKeyDocument(output.SecretString ?? '{}'));
  }
  return documents;
}
