import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { parseRegistryManifest, type RegistryManifest } from '../../shared/keys/registry';
import { describeAwsEnvironmentProblem, describeSecretFailure } from './aws-failure';
import { resolvedRegion } from './aws-settings';
import { missingOutputsProblem, STACK_OUTPUTS, StackReadError, type StackOutputs } from './stack-outputs';

/**
 * Where a deployed stack keeps its keys, as the key CLI and the smoke test both find them: with a `KeyRegistry`
 * output, in the shards its manifest secret names; without, in the one secret `KeysSecretArn` names (a registry
 * of one shard, as every stack was before shards).
 */
export type StackRegistry =
  | { readonly kind: 'manifest'; readonly manifestId: string }
  | { readonly kind: 'single'; readonly secretId: string };

export function stackRegistry(stackName: string, outputs: StackOutputs): StackRegistry {
  const manifestId = outputs.values.get(STACK_OUTPUTS.keyRegistry);
  if (manifestId !== undefined) return { kind: 'manifest', manifestId };
  const secretId = outputs.values.get(STACK_OUTPUTS.keysSecretArn);
  if (secretId !== undefined) return { kind: 'single', secretId };
  throw new StackReadError(missingOutputsProblem(stackName, outputs, [STACK_OUTPUTS.keysSecretArn]));
}

/**
 * Reads and checks the manifest secret (AWSCURRENT). It holds no key, but its problems are phrased without
 * quoting it anyway. Throws StackReadError with one line.
 */
export async function readManifestSecret(
  client: SecretsManagerClient,
  manifestId: string,
  credentialsHint?: string,
): Promise<RegistryManifest> {
  let text: string | undefined;
  try {
    const output = await client.send(
      new GetSecretValueCommand({ SecretId: manifestId, VersionStage: 'AWSCURRENT' }),
    );
    text = output.SecretString;
  } catch (error) {
    throw new StackReadError(
      describeAwsEnvironmentProblem(error, credentialsHint) ??
        describeSecretFailure(error, 'could not read the key registry manifest', {
          secretId: manifestId,
          region: await resolvedRegion(client),
        }),
    );
  }
  if (text === undefined) {
    throw new StackReadError(`the key registry manifest ${manifestId} has no SecretString`);
  }
  const reading = parseRegistryManifest(text);
  if (!reading.ok) throw new StackReadError(`${reading.problem} (secret ${manifestId})`);
  return reading.manifest;
}
