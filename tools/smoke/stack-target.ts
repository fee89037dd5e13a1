import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { KeyDocumentError, parseKeyDocument, type KeyDocument } from '../../shared/keys/key-document';
import { errorMessage } from '../../shared/errors';
import { keyPrefixProblem } from '../../shared/keys/key-format';
import { shardsToSearch } from '../../shared/keys/registry';
import { describeSecretFailure } from '../common/aws-failure';
import { resolvedRegion } from '../common/aws-settings';
import { readManifestSecret, stackRegistry } from '../common/registry-locator';
import {
  describeStackFailure,
  missingOutputsProblem,
  readStackOutputs,
  STACK_OUTPUTS,
  StackReadError,
  type StackOutputs,
} from '../common/stack-outputs';
import { firstLine } from '../common/text';
import { APP_KEY_ENV } from './args';
import type { SmokeAwsClients } from './aws-clients';
import { readPaymentUrl } from './payment-url';
import { chooseSmokeKey } from './secret-key';
import { SmokeError } from './smoke-error';

export { STACK_OUTPUTS, describeStackFailure };

/**
 * Region and credentials are resolved before any call, so a missing one is reported as what it is, in this
 * tool's terms, rather than as the failure of whichever call came first.
 */
async function checkAwsEnvironment(client: SecretsManagerClient): Promise<void> {
  try {
    await client.config.region();
  } catch {
    throw new SmokeError('no AWS region: set AWS_REGION (or use a profile that names one)');
  }
  try {
    await client.config.credentials();
  } catch (error) {
    // The provider's message names profiles and files (an expired SSO session, a missing profile), never secrets.
    const detail = firstLine(errorMessage(error) ?? '');
    throw new SmokeError(
      `no usable AWS credentials${detail === '' ? '' : ` (${detail})`}: set AWS_PROFILE (after "aws sso login" ` +
        `for an SSO profile), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; or use --url with the key in ${APP_KEY_ENV}`,
    );
  }
}

async function readOutputs(client: CloudFormationClient, stackName: string): Promise<StackOutputs> {
  try {
    return await readStackOutputs(client, stackName);
  } catch (error) {
    if (error instanceof StackReadError) throw new SmokeError(error.message);
    throw error;
  }
}

/** The secret's AWSCURRENT text. Failures say what to do in one line, as the key CLI's do. */
async function readSecretText(client: SecretsManagerClient, secretArn: string): Promise<string> {
  try {
    const output = await client.send(
      new GetSecretValueCommand({ SecretId: secretArn, VersionStage: 'AWSCURRENT' }),
    );
    if (output.SecretString === undefined) {
      throw new SmokeError(`secret ${secretArn} has no SecretString (binary secrets are not supported)`);
    }
    return output.SecretString;
  } catch (error) {
    if (error instanceof SmokeError) throw error;
    const region = await resolvedRegion(client);
    throw new SmokeError(describeSecretFailure(error, 'could not read', { secretId: secretArn, region }));
  }
}

function readKeyDocument(text: string, secretArn: string): KeyDocument {
  try {
    return parseKeyDocument(text);
  } catch (error) {
    if (error instanceof KeyDocumentError) {
      throw new SmokeError(`cannot read the keys in secret ${secretArn}: ${error.message}`);
    }
    throw error;
  }
}

export interface StackTarget {
  readonly url: URL;
  readonly appKey: string;
  /** The secret the key came from: the app's shard. */
  readonly secretArn: string;
  /** The stack's key prefix (its KeyPrefix output), when it has one. */
  readonly keyPrefix?: string;
}

/** The KeyPrefix output when it is a usable prefix; a stack deployed before the key format has none. */
function keyPrefixOf(outputs: StackOutputs): { readonly keyPrefix?: string } {
  const keyPrefix = outputs.values.get(STACK_OUTPUTS.keyPrefix);
  return keyPrefix !== undefined && keyPrefixProblem(keyPrefix) === undefined ? { keyPrefix } : {};
}

/**
 * The secrets to look in for `appId`, in order: its home shard (and, while a reshard is under way, the home it had
 * before), found from the manifest the stack's KeyRegistry output names; or the one secret KeysSecretArn names.
 */
async function secretsToSearch(
  stackName: string,
  outputs: StackOutputs,
  appId: string,
  client: SecretsManagerClient,
): Promise<readonly string[]> {
  try {
    const registry = stackRegistry(stackName, outputs);
    if (registry.kind === 'single') return [registry.secretId];
    const manifest = await readManifestSecret(client, registry.manifestId);
    return shardsToSearch(manifest, appId).map((index) => manifest.shardIds[index] ?? '');
  } catch (error) {
    if (error instanceof StackReadError) throw new SmokeError(error.message);
    throw error;
  }
}

/**
 * What --stack needs: the stack's PaymentUrl output, and the app's newest plain key from the secret that holds
 * the app: its shard (shardOf, from the registry's manifest), or the one keys secret (AWSCURRENT). Failures are
 * SmokeError: one line, never a key.
 */
export async function readStackTarget(
  stackName: string,
  appId: string,
  clients: SmokeAwsClients,
): Promise<StackTarget> {
  await checkAwsEnvironment(clients.secretsManager);
  const outputs = await readOutputs(clients.cloudFormation, stackName);
  const paymentUrl = outputs.values.get(STACK_OUTPUTS.paymentUrl);
  const keysSecretArn = outputs.values.get(STACK_OUTPUTS.keysSecretArn);
  if (paymentUrl === undefined || keysSecretArn === undefined) {
    throw new SmokeError(
      missingOutputsProblem(stackName, outputs, [STACK_OUTPUTS.paymentUrl, STACK_OUTPUTS.keysSecretArn]),
    );
  }
  const reading = readPaymentUrl(paymentUrl);
  if (!reading.ok) {
    throw new SmokeError(`the ${STACK_OUTPUTS.paymentUrl} output of stack ${stackName} ${reading.problem}`);
  }

  const search = await secretsToSearch(stackName, outputs, appId, clients.secretsManager);
  // Readers take the first copy they find: so does the smoke test, or reports from the app's home.
  let chosen: { readonly secretArn: string; readonly document: KeyDocument } | undefined;
  for (const secretId of search) {
    const read = readKeyDocument(await readSecretText(clients.secretsManager, secretId), secretId);
    if (chosen === undefined || read.has(appId)) chosen = { secretArn: secretId, document: read };
    if (read.has(appId)) break;
  }
  const { secretArn, document } = chosen ?? { secretArn: keysSecretArn, document: new Map() };
  const choice = chooseSmokeKey(document, appId);
  const where = search.length > 1 ? `secrets ${search.join(' and ')}` : `secret ${secretArn}`;
  switch (choice.kind) {
    case 'key':
      return { url: reading.url, appKey: choice.key, secretArn, ...keyPrefixOf(outputs) };
    case 'unknown-app':
      throw new SmokeError(`app ${appId} is not in ${where}`);
    case 'digests-only':
      throw new SmokeError(
        `app ${appId} has only sha256: digests in secret ${secretArn}, no key the test could send; ` +
          `run with --url ${reading.url.href} and the app's key in ${APP_KEY_ENV}`,
      );
    case 'expired-only':
      throw new SmokeError(
        `app ${appId} has only expired keys in secret ${secretArn}; give it a key ` +
          `(npm run keys -- rotate ${appId}) or run with --url ${reading.url.href} and the app's key in ${APP_KEY_ENV}`,
      );
  }
}
