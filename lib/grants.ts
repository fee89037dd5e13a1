import { Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';

/**
 * Lets `grantee` use a customer managed KMS key only when Secrets Manager calls KMS on its behalf (kms:ViaService),
 * never directly. Granted on the principal, so it also works for imported keys, whose key policy the stack
 * cannot change.
 */
export function grantKeyUseThroughSecretsManager(
  grantee: iam.IGrantable & { readonly stack: Stack },
  key: kms.IKey,
  actions: readonly string[],
): void {
  iam.Grant.addToPrincipal({
    grantee,
    actions: [...actions],
    resourceArns: [key.keyArn],
    conditions: {
      StringEquals: { 'kms:ViaService': `secretsmanager.${grantee.stack.region}.amazonaws.com` },
    },
  });
}

/** The keys secret a function works on, and the key that encrypts it: what its grants are made from. */
export interface KeysSecretAccess {
  /** The keys secret. */
  readonly secret: secretsmanager.ISecret;
  /**
   * The customer managed KMS key that encrypts the secret.
   * @default - the AWS managed key `aws/secretsmanager`, and no KMS permission is granted
   */
  readonly encryptionKey?: kms.IKey;
}
