/**
 * The parts of a synthesized template that concern the keys secret: what a stack deployed before the key registry
 * must keep exactly when it stays on one shard. Recorded once from the template as it was before shards existed
 * (test/infrastructure/lib/fixtures/single-shard-keys.json) and compared with today's.
 */

interface TemplateJson {
  readonly Resources?: Readonly<Record<string, ResourceJson>>;
  readonly Outputs?: Readonly<Record<string, unknown>>;
}

interface ResourceJson {
  readonly Type: string;
  readonly Properties?: Readonly<Record<string, unknown>>;
}

interface StatementJson {
  readonly Action?: string | readonly string[];
}

export interface KeysTemplateParts {
  /** Every secret, whole (properties, retention and cdk-nag acknowledgements), by logical ID. */
  readonly secrets: Readonly<Record<string, unknown>>;
  /** Every rotation schedule, whole, by logical ID. */
  readonly rotationSchedules: Readonly<Record<string, unknown>>;
  /** The `KeysSecretArn` output, whole. */
  readonly keysSecretOutput: unknown;
  /** The statements on Secrets Manager or KMS of each IAM policy that has any, with the roles it is attached to. */
  readonly policies: Readonly<Record<string, { readonly roles: unknown; readonly statements: unknown[] }>>;
  /** The registry's environment variables of each function that has any, by logical ID. */
  readonly functionEnvironments: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** KEYS_SECRET_ID and the registry's others (KEY_SHARDS, KEY_SHARDS_PREVIOUS, KEY_SHARD_NAME_PREFIX). */
const REGISTRY_VARIABLE = /^(KEYS_SECRET_ID|KEY_SHARD)/;
const KEYS_ACTION = /^(secretsmanager|kms):/;

function actionsOf(statement: StatementJson): readonly string[] {
  const { Action } = statement;
  if (Action === undefined) return [];
  return typeof Action === 'string' ? [Action] : Action;
}

function byType(template: TemplateJson, type: string): [string, ResourceJson][] {
  return Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === type);
}

export function keysTemplateParts(template: TemplateJson): KeysTemplateParts {
  const policies: Record<string, { roles: unknown; statements: unknown[] }> = {};
  for (const [id, policy] of byType(template, 'AWS::IAM::Policy')) {
    const document = policy.Properties?.PolicyDocument as { Statement?: StatementJson[] } | undefined;
    const statements = (document?.Statement ?? []).filter((statement) =>
      actionsOf(statement).some((action) => KEYS_ACTION.test(action)),
    );
    if (statements.length > 0) policies[id] = { roles: policy.Properties?.Roles, statements };
  }

  const functionEnvironments: Record<string, Record<string, unknown>> = {};
  for (const [id, fn] of byType(template, 'AWS::Lambda::Function')) {
    const variables = (fn.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
      ?.Variables;
    const registry = Object.entries(variables ?? {}).filter(([name]) => REGISTRY_VARIABLE.test(name));
    if (registry.length > 0) functionEnvironments[id] = Object.fromEntries(registry);
  }

  return {
    secrets: Object.fromEntries(byType(template, 'AWS::SecretsManager::Secret')),
    rotationSchedules: Object.fromEntries(byType(template, 'AWS::SecretsManager::RotationSchedule')),
    keysSecretOutput: template.Outputs?.KeysSecretArn,
    policies,
    functionEnvironments,
  };
}
