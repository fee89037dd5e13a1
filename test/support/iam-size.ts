/**
 * IAM counts a policy's size on the document CloudFormation resolves, whitespace left out: the template holds
 * `Ref`s and `Fn::Join`s instead. This resolves a policy document as it would be deployed at its longest (the
 * longest partition, a Region name longer than any today, CloudFormation's generated names at their usual length),
 * so a test can hold each policy to IAM's limits in the worst case.
 */

interface TemplateJson {
  readonly Resources: Readonly<Record<string, ResourceJson>>;
}

interface ResourceJson {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
}

/** The longest each pseudo parameter resolves to (lib/secret-grants.ts bounds a secret's ARN the same way). */
export const WORST_CASE = {
  partition: 'aws-us-gov',
  region: 'x'.repeat(20),
  account: '123456789012',
  urlSuffix: 'amazonaws.com.cn',
} as const;

/** A name CloudFormation generates (`<stack>-<logical id>-<suffix>`): the stack name at its longest, 128. */
const GENERATED_NAME = 'n'.repeat(128 + 1 + 64 + 1 + 13);
/** Anything else a policy might name, at a generous length. */
const OTHER = 'o'.repeat(256);

function arn(service: string, resource: string): string {
  const { partition, region, account } = WORST_CASE;
  return `arn:${partition}:${service}:${region}:${account}:${resource}`;
}

function refValue(template: TemplateJson, id: string): string {
  switch (id) {
    case 'AWS::Partition':
      return WORST_CASE.partition;
    case 'AWS::Region':
      return WORST_CASE.region;
    case 'AWS::AccountId':
      return WORST_CASE.account;
    case 'AWS::URLSuffix':
      return WORST_CASE.urlSuffix;
  }
  const resource = template.Resources[id];
  if (resource?.Type === 'AWS::SecretsManager::Secret') {
    const name = resource.Properties?.Name;
    return arn('secretsmanager', `secret:${typeof name === 'string' ? name : GENERATED_NAME}-AbCdEf`);
  }
  return OTHER;
}

/** The document with every token replaced by the longest value it can resolve to. */
export function resolveAtLongest(value: unknown, template: TemplateJson): unknown {
  if (Array.isArray(value)) return value.map((item) => resolveAtLongest(item, template));
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  if (typeof record.Ref === 'string') return refValue(template, record.Ref);
  if (Array.isArray(record['Fn::GetAtt'])) {
    const [id] = record['Fn::GetAtt'] as string[];
    const type = template.Resources[id ?? '']?.Type;
    if (type === 'AWS::Logs::LogGroup') return arn('logs', `log-group:${GENERATED_NAME}:*`);
    if (type === 'AWS::KMS::Key') return arn('kms', `key/${'k'.repeat(36)}`);
    return OTHER;
  }
  if (Array.isArray(record['Fn::Join'])) {
    const [separator, parts] = record['Fn::Join'] as [string, unknown[]];
    return parts.map((part) => String(resolveAtLongest(part, template))).join(separator);
  }
  return Object.fromEntries(
    Object.entries(record).map(([key, item]) => [key, resolveAtLongest(item, template)]),
  );
}

/** The characters IAM counts in a policy document: its JSON without whitespace, at its longest. */
export function policySizeAtLongest(document: unknown, template: TemplateJson): number {
  return JSON.stringify(resolveAtLongest(document, template)).length;
}

export interface RolePolicySizes {
  /** Every inline policy of the role together. */
  readonly inlineCharacters: number;
  /** Each managed policy attached to the role. */
  readonly managedPolicyCharacters: readonly number[];
}

function attachedTo(resource: ResourceJson, roleId: string): boolean {
  const roles = resource.Properties?.Roles;
  return Array.isArray(roles) && roles.some((role) => (role as { Ref?: unknown }).Ref === roleId);
}

/** What IAM counts for one role: its inline policies together, and each managed policy attached to it. */
export function rolePolicySizes(template: TemplateJson, roleId: string): RolePolicySizes {
  const of = (type: string): number[] =>
    Object.values(template.Resources)
      .filter((resource) => resource.Type === type && attachedTo(resource, roleId))
      .map((resource) => policySizeAtLongest(resource.Properties?.PolicyDocument, template));
  return {
    inlineCharacters: of('AWS::IAM::Policy').reduce((sum, size) => sum + size, 0),
    managedPolicyCharacters: of('AWS::IAM::ManagedPolicy'),
  };
}
