import {
  DescribeStacksCommand,
  type CloudFormationClient,
  type Output,
} from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { KeyDocumentError, parseKeyDocument, type KeyDocument } from '../../shared/keys/key-document';
import { errorMessage, errorName } from '../../shared/errors';
import { nonEmpty } from '../common/args';
import { describeAwsFailure, describeSecretFailure } from '../common/aws-failure';
import { AWS_SERVICES, resolvedRegion } from '../common/aws-settings';
import { firstLine } from '../common/text';
import { APP_KEY_ENV } from './args';
import type { SmokeAwsClients } from './aws-clients';
import { readPaymentUrl } from './payment-url';
import { chooseSmokeKey } from './secret-key';
import { SmokeError } from './smoke-error';

/** The outputs PaymentApiStack declares (lib/payment-api-stack.ts). */
export const STACK_OUTPUTS = { paymentUrl: 'PaymentUrl', keysSecretArn: 'KeysSecretArn' } as const;

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

/** One line about a failed DescribeStacks. */
export function describeStackFailure(error: unknown, stackName: string): string {
  if (errorName(error) === 'ValidationError' && /does not exist/i.test(errorMessage(error) ?? '')) {
    return `stack ${stackName} not found (check AWS_REGION and the account of the credentials)`;
  }
  return `could not read stack ${stackName}: ${describeAwsFailure(error, AWS_SERVICES.cloudFormation)}`;
}

function outputValue(outputs: readonly Output[], key: string): string | undefined {
  return nonEmpty(outputs.find((output) => output.OutputKey === key)?.OutputValue);
}

async function readStackOutputs(
  client: CloudFormationClient,
  stackName: string,
): Promise<{ readonly paymentUrl: string; readonly keysSecretArn: string }> {
  let stack;
  try {
    const output = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    stack = output.Stacks?.[0];
  } catch (error) {
    throw new SmokeError(describeStackFailure(error, stackName));
  }
  if (stack === undefined) throw new SmokeError(`stack ${stackName} not found`);
  const outputs = stack.Outputs ?? [];
  const paymentUrl = outputValue(outputs, STACK_OUTPUTS.paymentUrl);
  const keysSecretArn = outputValue(outputs, STACK_OUTPUTS.keysSecretArn);
  const missing = [
    ...(paymentUrl === undefined ? [STACK_OUTPUTS.paymentUrl] : []),
    ...(keysSecretArn === undefined ? [STACK_OUTPUTS.keysSecretArn] : []),
  ];
  if (paymentUrl === undefined || keysSecretArn === undefined) {
    throw new SmokeError(
      `stack ${stackName} (${stack.StackStatus ?? 'status unknown'}) has no ${missing.join(' or ')} output; ` +
        'is it a payment-api stack, deployed?',
    );
  }
  return { paymentUrl, keysSecretArn };
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
  readonly secretArn: string;
}

/**
 * What --stack needs: the stack's PaymentUrl output, and the app's newest plain key from the secret its
 * KeysSecretArn output names (AWSCURRENT). Failures are SmokeError: one line, never a key.
 */
export async function readStackTarget(
  stackName: string,
  appId: string,
  clients: SmokeAwsClients,
): Promise<StackTarget> {
  await checkAwsEnvironment(clients.secretsManager);
  const { paymentUrl, keysSecretArn } = await readStackOutputs(clients.cloudFormation, stackName);
  const reading = readPaymentUrl(paymentUrl);
  if (!reading.ok) {
    throw new SmokeError(`the ${STACK_OUTPUTS.paymentUrl} output of stack ${stackName} ${reading.problem}`);
  }

  const text = await readSecretText(clients.secretsManager, keysSecretArn);
  const choice = chooseSmokeKey(readKeyDocument(text, keysSecretArn), appId);
  switch (choice.kind) {
    case 'key':
      return { url: reading.url, appKey: choice.key, secretArn: keysSecretArn };
    case 'unknown-app':
      throw new SmokeError(`app ${appId} is not in secret ${keysSecretArn}`);
    case 'digests-only':
      throw new SmokeError(
        `app ${appId} has only sha256: digests in secret ${keysSecretArn}, no key the test could send; ` +
          `run with --url ${reading.url.href} and the app's key in ${APP_KEY_ENV}`,
      );
    case 'expired-only':
      throw new SmokeError(
        `app ${appId} has only expired keys in secret ${keysSecretArn}; give it a key ` +
          `(npm run keys -- rotate ${appId}) or run with --url ${reading.url.href} and the app's key in ${APP_KEY_ENV}`,
      );
  }
}
