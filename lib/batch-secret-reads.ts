import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { NagSuppressions } from 'cdk-nag';

/**
 * Lets `handler` read the key shards 20 at a time. BatchGetSecretValue supports no resource-level permission: it is
 * granted on "*", and Secrets Manager still checks GetSecretValue on each secret it returns, which the role must
 * have on the shards only (the caller grants that). `role` names the role in the error if it has no policy.
 */
export function allowBatchSecretReads(handler: NodejsFunction, role: string): void {
  handler.addToRolePolicy(
    new iam.PolicyStatement({ actions: ['secretsmanager:BatchGetSecretValue'], resources: ['*'] }),
  );
  const policy = handler.role?.node.tryFindChild('DefaultPolicy');
  if (policy === undefined) throw new Error(`The ${role} role has no default policy to acknowledge`);
  NagSuppressions.addResourceSuppressions(policy, [
    {
      id: 'AwsSolutions-IAM5',
      reason:
        'secretsmanager:BatchGetSecretValue supports no resource-level permissions, so it can only be granted ' +
        'on "*"; Secrets Manager still requires GetSecretValue on each secret returned, which this role has on ' +
        'the key shards only.',
      appliesTo: ['Resource::*'],
    },
  ]);
}
