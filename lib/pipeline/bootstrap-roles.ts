/**
 * The roles `cdk bootstrap` creates, by name: `cdk-<qualifier>-<kind>-role-<account>-<region>`. The CDK CLI assumes
 * them itself (deploy, file-publishing for assets, lookup for reads and `cdk diff`), so a pipeline's role needs no
 * permission but to assume them.
 */
import type { Stack } from 'aws-cdk-lib';
import type { TextFormat } from '../validation';

export const DEFAULT_QUALIFIER = 'hnb659fds';

/** What `cdk bootstrap --qualifier` accepts: up to 10 lower-case letters or digits. */
export const CDK_QUALIFIER: TextFormat = {
  pattern: /^[a-z0-9]{1,10}$/,
  description: '1 to 10 lower-case letters or digits, as given to cdk bootstrap --qualifier',
};

/** A Region name such as `eu-west-1` or `us-gov-west-1`. */
export const REGION_NAME: TextFormat = {
  pattern: /^[a-z]{2}(?:-[a-z]+)+-[0-9]{1,2}$/,
  description: 'a Region name such as eu-west-1',
};

export type BootstrapRoleKind = 'deploy' | 'file-publishing' | 'lookup';

export const DEPLOY_ROLE_KINDS: readonly BootstrapRoleKind[] = ['deploy', 'file-publishing', 'lookup'];

/** The ARN of each bootstrap role of `kinds` in each Region, in `stack`'s account and partition. */
export function bootstrapRoleArns(
  stack: Stack,
  qualifier: string,
  kinds: readonly BootstrapRoleKind[],
  regions: readonly string[],
): string[] {
  return regions.flatMap((region) =>
    kinds.map(
      (kind) =>
        `arn:${stack.partition}:iam::${stack.account}:role/cdk-${qualifier}-${kind}-role-${stack.account}-${region}`,
    ),
  );
}
