import { Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Construct } from 'constructs';

/**
 * IAM's limits on a role's permissions, which a grant on every shard of a large registry meets: 256 secret ARNs
 * take about 38,000 characters, where a role's inline policies share 10,240. So a grant on many secrets goes into
 * customer managed policies, each filled up to its own limit, attached to the role.
 */
export const IAM_POLICY_LIMITS = {
  /** A customer managed policy's document, whitespace not counted. */
  managedPolicyCharacters: 6_144,
  /** All of a role's inline policies together, whitespace not counted. */
  inlinePolicyCharacters: 10_240,
  /** Managed policies attached to one role: IAM's default quota (20 on request, never more). */
  managedPoliciesPerRole: 10,
} as const;

/**
 * The most characters each part of a secret's ARN can take once CloudFormation resolves it, so a policy that fits
 * with these fits in any partition, Region and account: the longest partition is aws-us-gov (10); the longest
 * Region today, us-isof-south-1, has 15 characters, and 20 leaves room for new ones; Secrets Manager adds "-" and 6
 * characters to the name.
 */
export const ARN_PART_BOUNDS = { partition: 10, region: 20, account: 12, nameSuffix: 7 } as const;

/** Secrets Manager's longest secret name: the bound for a name that is not known at synth. */
const MAX_SECRET_NAME_LENGTH = 512;

/** `arn:<partition>:secretsmanager:<region>:<account>:secret:<name>-AbCdEf` at its longest. */
export function secretArnLengthBound(secretName: string): number {
  const name = Token.isUnresolved(secretName) ? MAX_SECRET_NAME_LENGTH : secretName.length;
  const { partition, region, account, nameSuffix } = ARN_PART_BOUNDS;
  return 'arn::secretsmanager:::secret:'.length + partition + region + account + name + nameSuffix;
}

/** The length of a policy document of one statement granting `actions` on resources of these lengths. */
export function policyDocumentLength(actions: readonly string[], resourceLengths: readonly number[]): number {
  return JSON.stringify({
    Version: '2012-10-17',
    Statement: [
      {
        Action: actions.length === 1 ? actions[0] : actions,
        Effect: 'Allow',
        Resource: resourceLengths.map((length) => 'x'.repeat(length)),
      },
    ],
  }).length;
}

/** A secret a grant names: its ARN as the template has it, and the longest that ARN can resolve to. */
export interface GrantedSecret {
  readonly arn: string;
  readonly arnLengthBound: number;
}

/**
 * The secrets split into as few managed policy documents as their worst-case length allows, in order: each chunk
 * is the longest run of secrets whose one statement stays within `limit` characters.
 */
export function chunkSecretsForPolicies(
  secrets: readonly GrantedSecret[],
  actions: readonly string[],
  limit: number = IAM_POLICY_LIMITS.managedPolicyCharacters,
): GrantedSecret[][] {
  const chunks: GrantedSecret[][] = [];
  let chunk: GrantedSecret[] = [];
  for (const secret of secrets) {
    const lengths = [...chunk, secret].map((entry) => entry.arnLengthBound);
    if (chunk.length > 0 && policyDocumentLength(actions, lengths) > limit) {
      chunks.push(chunk);
      chunk = [];
    }
    if (policyDocumentLength(actions, [secret.arnLengthBound]) > limit) {
      throw new Error(`a grant on one secret needs more than ${limit} characters of policy`);
    }
    chunk.push(secret);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

export interface SecretGrantPoliciesProps {
  /** Names the policies in IAM's console: says what they allow and why they are split. */
  readonly description: string;
  readonly actions: readonly string[];
  readonly secrets: readonly GrantedSecret[];
  /**
   * Managed policies each role they go to may still take; a grant that needs more throws at synth, where IAM would
   * refuse the deploy.
   * @default IAM_POLICY_LIMITS.managedPoliciesPerRole
   */
  readonly maxPolicies?: number;
}

/**
 * `actions` on exactly these secrets, in customer managed policies created in `scope` as `<idPrefix>1`, `2`, …,
 * none of them over IAM's 6,144 characters at the ARNs' longest. Attach them to each role that needs the grant
 * (ManagedPolicy.attachToRole); they hold no statement beyond this one grant, so roles may share them.
 */
export function createSecretGrantPolicies(
  scope: Construct,
  idPrefix: string,
  props: SecretGrantPoliciesProps,
): iam.ManagedPolicy[] {
  const chunks = chunkSecretsForPolicies(props.secrets, props.actions);
  const maxPolicies = props.maxPolicies ?? IAM_POLICY_LIMITS.managedPoliciesPerRole;
  if (chunks.length > maxPolicies) {
    throw new Error(
      `${props.actions.join(', ')} on ${props.secrets.length} secrets needs ${chunks.length} managed policies ` +
        `at the longest ARNs, and a role takes ${maxPolicies}: use fewer shards or a shorter stack name`,
    );
  }
  return chunks.map(
    (chunk, index) =>
      new iam.ManagedPolicy(scope, `${idPrefix}${index + 1}`, {
        description: `${props.description} (part ${index + 1} of ${chunks.length})`,
        statements: [
          new iam.PolicyStatement({
            actions: [...props.actions],
            resources: chunk.map((secret) => secret.arn),
          }),
        ],
      }),
  );
}
