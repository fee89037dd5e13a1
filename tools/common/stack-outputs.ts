import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { errorMessage, errorName } from '../../shared/errors';
import { nonEmpty } from './args';
import { describeAwsFailure } from './aws-failure';
import { AWS_SERVICES } from './aws-settings';

/**
 * The outputs of PaymentApiStack (lib/payment-api-stack.ts) the tools read: the /payment URL, shard 0 of the key
 * registry (the one keys secret before shards existed), and, when the registry has several shards, the manifest
 * secret that names them all (docs/keys.md).
 */
export const STACK_OUTPUTS = {
  paymentUrl: 'PaymentUrl',
  keysSecretArn: 'KeysSecretArn',
  keyRegistry: 'KeyRegistry',
  keyShards: 'KeyShards',
  keyShardNamePrefix: 'KeyShardNamePrefix',
  /** The stack's key prefix (`keyPrefix`); absent on a stack deployed before the key format: the default. */
  keyPrefix: 'KeyPrefix',
} as const;

/** Reading a stack (or what its outputs name) failed; the message is one line for the operator. */
export class StackReadError extends Error {
  override readonly name = 'StackReadError';
}

/** One line about a failed DescribeStacks. */
export function describeStackFailure(error: unknown, stackName: string): string {
  if (errorName(error) === 'ValidationError' && /does not exist/i.test(errorMessage(error) ?? '')) {
    return `stack ${stackName} not found (check AWS_REGION and the account of the credentials)`;
  }
  return `could not read stack ${stackName}: ${describeAwsFailure(error, AWS_SERVICES.cloudFormation)}`;
}

export interface StackOutputs {
  readonly status: string;
  /** Output key → value; empty values are left out. */
  readonly values: ReadonlyMap<string, string>;
}

/** The stack's outputs, from one DescribeStacks. Throws StackReadError. */
export async function readStackOutputs(
  client: CloudFormationClient,
  stackName: string,
): Promise<StackOutputs> {
  let stack;
  try {
    const output = await client.send(new DescribeStacksCommand({ StackName: stackName }));
    stack = output.Stacks?.[0];
  } catch (error) {
    throw new StackReadError(describeStackFailure(error, stackName));
  }
  if (stack === undefined) throw new StackReadError(`stack ${stackName} not found`);
  const values = new Map<string, string>();
  for (const output of stack.Outputs ?? []) {
    const value = nonEmpty(output.OutputValue);
    if (output.OutputKey !== undefined && value !== undefined) values.set(output.OutputKey, value);
  }
  return { status: stack.StackStatus ?? 'status unknown', values };
}

/** The outputs a payment-api stack must have, or one line naming those missing. */
export function missingOutputsProblem(
  stackName: string,
  outputs: StackOutputs,
  keys: readonly string[],
): string {
  const missing = keys.filter((key) => !outputs.values.has(key));
  return (
    `stack ${stackName} (${outputs.status}) has no ${missing.join(' or ')} output; ` +
    'is it a payment-api stack, deployed?'
  );
}
