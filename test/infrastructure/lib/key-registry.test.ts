import { Duration, NestedStack, type Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import type { PaymentApiProps } from '../../../lib/payment-api';
import { PaymentApiStack } from '../../../lib/payment-api-stack';
import { IAM_POLICY_LIMITS } from '../../../lib/secret-grants';
import { SCHEDULES_PER_NESTED_STACK } from '../../../lib/key-rotation';
import {
  parseRegistryManifest,
  readRegistryLayout,
  secretRegistryLayout,
  type RegistryLayout,
} from '../../../shared/keys/registry';
import {
  actionsOf,
  constructUnbundled,
  functionEnvironment,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  resourcesOf,
  roleLogicalId,
  sharedStackTemplate,
  statementsOn,
  type Statement,
  synthesize,
  type TemplateResource,
  unbundledApp,
  partialArnJoin,
  VIA_SECRETS_MANAGER,
} from '../../support/construct-template';
import { rolePolicySizes } from '../../support/iam-size';

const SHARD_ZERO_ID = 'PaymentApiKeysSecret965420B1';
/** The ARN shard 0's `Ref` stands for, substituted where a test reads a value the Lambda would get. */
const SHARD_ZERO_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:KeysSecret-AbCdEf';

/** The layout of a registry of stack "Test", shard 0 by its ARN, as readers get it. */
function layoutOf(shards: number, previousShards?: number): RegistryLayout {
  return secretRegistryLayout({
    shardZeroId: SHARD_ZERO_ARN,
    namePrefix: 'payment-api/Test/keys/',
    shards,
    previousShards,
  });
}

/** Shard secrets 1 and up, by index, from their fixed names under stack "Test". */
function shardSecrets(template: Template): Map<number, { id: string; resource: TemplateResource }> {
  const shards = new Map<number, { id: string; resource: TemplateResource }>();
  for (const [id, resource] of Object.entries(resourcesOf(template, 'AWS::SecretsManager::Secret'))) {
    const match = /^payment-api\/Test\/keys\/shard-(\d+)$/.exec(String(resource.Properties.Name));
    if (match) shards.set(Number(match[1]), { id, resource });
  }
  return shards;
}

/** A template value as the function reads it: shard 0's Ref as its ARN, another token as its JSON. */
function resolved(value: unknown): string {
  if (typeof value === 'string') return value;
  return JSON.stringify(value) === JSON.stringify({ Ref: SHARD_ZERO_ID })
    ? SHARD_ZERO_ARN
    : JSON.stringify(value);
}

/** A function's environment, as the function reads it. */
function environmentOf(template: Template, fn: 'handler' | 'monitor'): Record<string, string | undefined> {
  return Object.fromEntries(
    Object.entries(functionEnvironment(template, fn)).map(([name, value]) => [name, resolved(value)]),
  );
}

/** The manifest secret's value, shard 0's Ref replaced by an ARN. */
function manifestText(template: Template): string {
  const manifest = Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret')).find(
    (resource) => resource.Properties.Name === 'payment-api/Test/keys/registry',
  );
  const value = manifest?.Properties.SecretString as string | { 'Fn::Join': [string, unknown[]] };
  if (typeof value === 'string') return value;
  return value['Fn::Join'][1].map(resolved).join('');
}

type Fn = 'handler' | 'monitor' | 'rotation';

/** The resources a function's managed policies grant `action` on. */
function managedResources(template: Template, fn: Fn, action: string): unknown[] {
  return functionRoleStatements(template, functionLogicalId(template, fn), 'AWS::IAM::ManagedPolicy')
    .filter((statement) => actionsOf(statement).includes(action))
    .flatMap((statement) => [statement.Resource].flat());
}

/** The secrets a function's managed policies grant `action` on, by logical ID, in order. */
function managedGrants(template: Template, fn: Fn, action: string): string[] {
  return managedResources(template, fn, action)
    .map((resource) => (resource as { Ref: string }).Ref)
    .sort();
}

function roleOf(template: Template, fn: Fn): string {
  return roleLogicalId(template, functionLogicalId(template, fn));
}

describe('PaymentApi with a key registry of 8 shards', () => {
  let template: Template;
  let shards: Map<number, { id: string; resource: TemplateResource }>;

  beforeAll(() => {
    ({ template } = synthesize({ keyShards: 8 }));
    shards = shardSecrets(template);
  });

  it('keeps shard 0 where the single secret always was, and creates shards 1 to 7 by their fixed names', () => {
    const unnamed = Object.entries(resourcesOf(template, 'AWS::SecretsManager::Secret'))
      .filter(([, resource]) => resource.Properties.Name === undefined)
      .map(([id]) => id);

    expect(unnamed).toEqual([SHARD_ZERO_ID]);
    expect([...shards.keys()].sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('starts every new shard as an empty keyring, retained when the stack is deleted or the shard replaced', () => {
    for (const [index, { resource }] of shards) {
      expect(resource).toMatchObject({
        Properties: {
          Name: `payment-api/Test/keys/shard-${index}`,
          SecretString: '{}',
          Description: `payment-api keys, shard ${index} of the key registry: a JSON object mapping each App-id to a key or a list of keys`,
        },
        DeletionPolicy: 'Retain',
        UpdateReplacePolicy: 'Retain',
      });
      expect(resource.Properties.GenerateSecretString).toBeUndefined();
      expect(resource.Properties.KmsKeyId).toBeUndefined();
    }
  });

  it('writes the manifest, which holds the layout and no key, and deletes it with the stack', () => {
    // Arrange
    const reading = parseRegistryManifest(manifestText(template));

    // Assert
    expect(reading).toEqual({
      ok: true,
      manifest: {
        ...layoutOf(8),
        keyCacheTtlSeconds: 60,
      },
    });
    template.hasResource('AWS::SecretsManager::Secret', {
      Properties: { Name: 'payment-api/Test/keys/registry' },
      DeletionPolicy: 'Delete',
    });
  });

  it('tells the payment Lambda and the monitor the layout, which readRegistryLayout reads back exactly', () => {
    const expected = layoutOf(8);

    for (const fn of ['handler', 'monitor'] as const) {
      const environment = environmentOf(template, fn);
      expect({ fn, layout: readRegistryLayout(environment) }).toEqual({ fn, layout: expected });
      expect(environment).toMatchObject({ KEY_SHARDS: '8', KEY_SHARD_NAME_PREFIX: 'payment-api/Test/keys/' });
      expect(environment).not.toHaveProperty('KEY_SHARDS_PREVIOUS');
    }
  });

  it('lets the payment Lambda GetSecretValue on exactly the shards: shard 0 as before, 1 to 7 in a managed policy', () => {
    // Arrange
    const handlerId = functionLogicalId(template, 'handler');
    const inline = statementsOn(functionRoleStatements(template, handlerId), 'secretsmanager:');

    // Assert
    expect(inline).toEqual([
      {
        Effect: 'Allow',
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: { Ref: SHARD_ZERO_ID },
      },
    ]);
    expect(managedGrants(template, 'handler', 'secretsmanager:GetSecretValue')).toEqual(
      [1, 2, 3, 4, 5, 6, 7].map((index) => shards.get(index)?.id).sort(),
    );
    const managed = Object.values(resourcesOf(template, 'AWS::IAM::ManagedPolicy'));
    expect(
      managed.flatMap((policy) =>
        (policy.Properties.PolicyDocument as { Statement: Statement[] }).Statement.flatMap(actionsOf),
      ),
    ).toEqual(['secretsmanager:GetSecretValue']);
  });

  it('shares the read policy between the payment Lambda and the monitor, and creates each only once it exists', () => {
    const [policyId] = Object.keys(resourcesOf(template, 'AWS::IAM::ManagedPolicy'));

    template.resourceCountIs('AWS::IAM::ManagedPolicy', 1);
    expect(resourcesOf(template)[policyId ?? '']?.Properties.Roles).toEqual([
      { Ref: roleOf(template, 'handler') },
      { Ref: roleOf(template, 'monitor') },
    ]);
    for (const fn of ['handler', 'monitor'] as const) {
      expect(resourcesOf(template)[functionLogicalId(template, fn)]?.DependsOn).toEqual([
        expect.stringMatching(/RoleDefaultPolicy/) as unknown,
        policyId,
      ]);
    }
  });
});

// Which outputs a registry adds, each with a literal description: payment-api-stack 'PaymentApiStack outputs'; their
// values at 64 shards: registry-templates 'keeps every resource and output it had'.
describe('PaymentApiStack outputs with a key registry', () => {
  it('name the previous count too while a reshard is under way', () => {
    expect(
      sharedStackTemplate({ keyShards: 8, keyShardsPrevious: 4 }).findOutputs('*').KeyShardsPrevious?.Value,
    ).toBe('4');
  });
});

describe.each<[string, PaymentApiProps, { shards: number; previousShards: number; slots: number }]>([
  ['growing from 4 to 8', { keyShards: 8, keyShardsPrevious: 4 }, { shards: 8, previousShards: 4, slots: 8 }],
  [
    'shrinking from 8 to 4',
    { keyShards: 4, keyShardsPrevious: 8 },
    { shards: 4, previousShards: 8, slots: 8 },
  ],
  ['shrinking from 4 to one', { keyShardsPrevious: 4 }, { shards: 1, previousShards: 4, slots: 4 }],
])('PaymentApi during a reshard, %s', (_case, props, expected) => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize(props));
  });

  it('keeps every shard either count uses, and tells readers both counts', () => {
    const layout = layoutOf(expected.shards, expected.previousShards);

    expect(shardSecrets(template).size).toBe(expected.slots - 1);
    expect(readRegistryLayout(environmentOf(template, 'handler'))).toEqual(layout);
    expect(parseRegistryManifest(manifestText(template))).toEqual({
      ok: true,
      manifest: { ...layout, keyCacheTtlSeconds: 60 },
    });
  });
});

describe('PaymentApi with a customer KMS key and 4 shards', () => {
  it('encrypts the new shards and the manifest with the key, and grants kms:Decrypt through Secrets Manager once per reader', () => {
    // Arrange
    const { template } = synthesize(
      { keyShards: 4 },
      { extra: (stack) => ({ secretEncryptionKey: new kms.Key(stack, 'Key') }) },
    );
    const keyId = onlyLogicalId(template, 'AWS::KMS::Key');

    // Assert
    for (const resource of Object.values(resourcesOf(template, 'AWS::SecretsManager::Secret'))) {
      expect(resource.Properties.KmsKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    }
    for (const fn of ['handler', 'monitor'] as const) {
      const kmsStatements = statementsOn(
        functionRoleStatements(template, functionLogicalId(template, fn)),
        'kms:',
      );
      expect(kmsStatements).toEqual([
        {
          Effect: 'Allow',
          Action: 'kms:Decrypt',
          Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
          Condition: VIA_SECRETS_MANAGER,
        },
      ]);
    }
  });
});

describe('PaymentApi with an existing secret as shard 0 of 16', () => {
  it('uses the secret as shard 0, creates shards 1 to 15, and names the secret in the manifest', () => {
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf';
    const template = Template.fromStack(
      new PaymentApiStack(unbundledApp(), 'Test', { existingSecret: arn, keyShards: 16 }),
    );

    expect(shardSecrets(template).size).toBe(15);
    expect(readRegistryLayout(environmentOf(template, 'handler')).shardIds[0]).toBe(arn);
    expect(JSON.parse(manifestText(template))).toMatchObject({
      shards: 16,
      shardIds: expect.arrayContaining([arn]) as unknown,
    });
  });
});

describe('PaymentApi with scheduled rotation of 256 shards', () => {
  let template: Template;
  let nested: NestedStack[];

  beforeAll(() => {
    const built = synthesize({ keyShards: 256, rotation: { every: Duration.days(30) } });
    template = built.template;
    nested = built.stack.node.findAll().filter((construct) => NestedStack.isNestedStack(construct));
  });

  it('stays within CloudFormation’s 500 resources, shard secrets in the stack and schedules in nested stacks', () => {
    expect(Object.keys(resourcesOf(template)).length).toBeLessThan(500);
    expect(shardSecrets(template).size).toBe(255);
    expect(nested).toHaveLength(4);
  });

  it('schedules shard 0 where it always was, and shards 1 to 255 in blocks fixed by index, all on the one function', () => {
    // Arrange
    const blocks = nested.map((stack) =>
      Object.values(resourcesOf(Template.fromStack(stack), 'AWS::SecretsManager::RotationSchedule')).map(
        (schedule) => schedule.Properties,
      ),
    );
    const parentSchedules = resourcesOf(template, 'AWS::SecretsManager::RotationSchedule');

    // Assert
    expect(Object.keys(parentSchedules)).toEqual([
      expect.stringMatching(/^PaymentApiKeyRotationSchedule/) as unknown,
    ]);
    expect(blocks.map((block) => block.length)).toEqual([SCHEDULES_PER_NESTED_STACK - 1, 64, 64, 64]);
    for (const block of blocks) {
      for (const schedule of block) {
        expect(schedule).toMatchObject({ RotationRules: { ScheduleExpression: 'rate(30 days)' } });
      }
      expect(new Set(block.map((schedule) => JSON.stringify(schedule.RotationLambdaARN))).size).toBe(1);
    }
  });

  it('creates each block only once Secrets Manager may invoke the function and the function may rotate those shards', () => {
    const permissionId = onlyLogicalId(template, 'AWS::Lambda::Permission', {
      Properties: { Principal: 'secretsmanager.amazonaws.com' },
    });
    const rotationPolicies = Object.entries(resourcesOf(template, 'AWS::IAM::ManagedPolicy'))
      .filter(([id]) => id.includes('RotateShards'))
      .map(([id]) => id);

    expect(rotationPolicies.length).toBeGreaterThan(0);
    for (const stack of Object.values(resourcesOf(template, 'AWS::CloudFormation::Stack'))) {
      expect([...(stack.DependsOn ?? [])].sort()).toEqual(
        expect.arrayContaining([permissionId, ...rotationPolicies]),
      );
    }
  });

  it('lets the rotation function rotate exactly the shards, and the readers only read them', () => {
    const every = [...shardSecrets(template).values()].map(({ id }) => id).sort();

    for (const action of [
      'secretsmanager:DescribeSecret',
      'secretsmanager:GetSecretValue',
      'secretsmanager:PutSecretValue',
      'secretsmanager:UpdateSecretVersionStage',
    ]) {
      expect({ action, granted: managedGrants(template, 'rotation', action) }).toEqual({
        action,
        granted: every,
      });
    }
    for (const fn of ['handler', 'monitor'] as const) {
      expect(managedGrants(template, fn, 'secretsmanager:GetSecretValue')).toEqual(every);
      expect(managedGrants(template, fn, 'secretsmanager:PutSecretValue')).toEqual([]);
    }
  });
});

describe('PaymentApi with scheduled rotation of 1,024 shards, the most keyShards allows', () => {
  let stack: Stack;
  let template: Template;
  let nested: NestedStack[];
  /** Every resource of the parent and nested stacks, by nested stack path ('' for the parent). */
  let everywhere: Map<string, Record<string, TemplateResource>>;

  beforeAll(() => {
    ({ stack, template } = synthesize({ keyShards: 1_024, rotation: { every: Duration.days(30) } }));
    nested = stack.node.findAll().filter((construct) => NestedStack.isNestedStack(construct));
    everywhere = new Map([
      ['', resourcesOf(template)],
      ...nested.map((child): [string, Record<string, TemplateResource>] => [
        child.node.path,
        resourcesOf(Template.fromStack(child)),
      ]),
    ]);
  }, 120_000);

  const secretsNamed = (stackResources: Record<string, TemplateResource>): number[] =>
    Object.values(stackResources)
      .filter((resource) => resource.Type === 'AWS::SecretsManager::Secret')
      .map((resource) => /shard-(\d+)$/.exec(String(resource.Properties.Name))?.[1])
      .filter((index): index is string => index !== undefined)
      .map(Number)
      .sort((a, b) => a - b);

  it('keeps shards 1 to 255 in the stack, and 256 and up in nested stacks of 256 fixed by index, each within 500 resources', () => {
    const blocks = [...everywhere].filter(([path]) => path.includes('ShardBlock'));

    expect(secretsNamed(resourcesOf(template))).toEqual(Array.from({ length: 255 }, (_, index) => index + 1));
    expect(
      blocks.map(([path, block]) => [
        path.split('/').pop(),
        secretsNamed(block)[0],
        secretsNamed(block).length,
      ]),
    ).toEqual([
      ['ShardBlock1', 256, 256],
      ['ShardBlock2', 512, 256],
      ['ShardBlock3', 768, 256],
    ]);
    for (const resourcesOfStack of everywhere.values()) {
      expect(Object.keys(resourcesOfStack).length).toBeLessThan(500);
    }
  });

  it("grants every reader GetSecretValue on the stack's own shard name prefix, and the rotation function its four calls there", () => {
    const prefix = partialArnJoin('payment-api/Test/keys/shard-*');

    for (const fn of ['handler', 'monitor'] as const) {
      expect(managedResources(template, fn, 'secretsmanager:GetSecretValue')).toEqual([prefix]);
      expect(managedResources(template, fn, 'secretsmanager:PutSecretValue')).toEqual([]);
    }
    for (const action of ['secretsmanager:GetSecretValue', 'secretsmanager:PutSecretValue']) {
      expect(managedResources(template, 'rotation', action)).toEqual([prefix]);
    }
  });

  it('schedules every shard, those from 256 on by name, each block created after the nested stack of its shards', () => {
    const schedules = [...everywhere]
      .filter(([path]) => path.includes('ShardSchedules'))
      .flatMap(([, block]) => Object.values(block))
      .filter((resource) => resource.Type === 'AWS::SecretsManager::RotationSchedule');
    const named = schedules
      .map((schedule) => schedule.Properties.SecretId)
      .filter((id): id is string => typeof id === 'string')
      .map((name) => Number(/shard-(\d+)$/.exec(name)?.[1]))
      .sort((a, b) => a - b);
    const scheduleStacks = Object.entries(resourcesOf(template, 'AWS::CloudFormation::Stack')).filter(
      ([id]) => id.includes('ShardSchedules'),
    );
    const blockIds = Object.keys(resourcesOf(template, 'AWS::CloudFormation::Stack')).filter((id) =>
      id.includes('ShardBlock'),
    );

    expect(schedules).toHaveLength(1_023);
    expect(named).toEqual(Array.from({ length: 768 }, (_, index) => index + 256));
    const dependingOnBlocks = scheduleStacks.filter(([, resource]) =>
      (resource.DependsOn ?? []).some((id) => blockIds.includes(id)),
    );
    expect(dependingOnBlocks).toHaveLength(12);
  });

  it('tells the payment Lambda the layout by count and prefix, as at 256', () => {
    expect(readRegistryLayout(environmentOf(template, 'handler'))).toEqual(layoutOf(1_024));
    expect(Buffer.byteLength(manifestText(template))).toBeLessThanOrEqual(65_536);
  });
});

describe('IAM sizes at 256 shards, the worst case: rotation on and the longest stack name the CDK app makes', () => {
  let template: Template;

  beforeAll(() => {
    // `PaymentApi-<env>` with an env name of 24 characters: 35, the longest bin/context.ts allows.
    const stack = new PaymentApiStack(unbundledApp(), `PaymentApi-${'e'.repeat(24)}`, {
      keyShards: 256,
      rotation: { every: Duration.days(30) },
      appRateLimit: { perSecond: 10 },
      tracing: true,
      secretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
    });
    template = Template.fromStack(stack);
  });

  it.each(['Handler', 'KeyRegistryMonitorFunction', 'KeyRotationFunction'])(
    'keeps the %s role within IAM’s limits with every ARN resolved at its longest',
    (name) => {
      // Arrange
      const roleId = onlyLogicalId(
        template,
        'AWS::IAM::Role',
        {},
        new RegExp(`^PaymentApi${name}Role[0-9A-F]{8}$`),
      );

      // Act
      const sizes = rolePolicySizes(
        template.toJSON() as { Resources: Record<string, TemplateResource> },
        roleId,
      );

      // Assert
      expect(sizes.inlineCharacters).toBeLessThanOrEqual(IAM_POLICY_LIMITS.inlinePolicyCharacters);
      expect(sizes.managedPolicyCharacters.length).toBeGreaterThan(0);
      expect(sizes.managedPolicyCharacters.length).toBeLessThanOrEqual(
        IAM_POLICY_LIMITS.managedPoliciesPerRole,
      );
      for (const size of sizes.managedPolicyCharacters) {
        expect(size).toBeLessThanOrEqual(IAM_POLICY_LIMITS.managedPolicyCharacters);
      }
    },
  );
});

describe('PaymentApi key registry props validation', () => {
  it.each<[string, PaymentApiProps, string]>([
    ['no shard', { keyShards: 0 }, 'keyShards must be a whole number from 1 to 1024, got 0'],
    [
      'a previous count out of range',
      { keyShards: 8, keyShardsPrevious: 0 },
      'keyShardsPrevious must be a whole number from 1 to 1024, got 0',
    ],
    [
      'a previous count equal to the count',
      { keyShards: 8, keyShardsPrevious: 8 },
      'keyShardsPrevious must differ from keyShards (8): set it only while a reshard is under way, to the count apps were placed by before, got 8',
    ],
  ])('rejects %s in the words the context uses', (_case, props, message) => {
    expect(() => {
      constructUnbundled(props);
    }).toThrow(message);
  });

  it('accepts the bounds: 1, 256, and a shrink to one shard', () => {
    for (const props of [{ keyShards: 1 }, { keyShards: 256 }, { keyShardsPrevious: 256 }]) {
      expect(() => {
        constructUnbundled(props);
      }).not.toThrow();
    }
  });
});
