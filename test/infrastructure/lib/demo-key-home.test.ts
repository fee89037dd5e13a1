import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Template } from 'aws-cdk-lib/assertions';
import type { PaymentApiProps } from '../../../lib/payment-api';
import { shardOf } from '../../../shared/keys/shard';
import {
  functionRoleStatements,
  onlyLogicalId,
  resourcesOf,
  sharedTemplate,
  statementsOn,
  synthesize,
} from '../../support/construct-template';

/** The logical ID of the shard secret named `payment-api/Test/keys/shard-<index>`. */
function shardId(template: Template, index: number): string {
  return onlyLogicalId(template, 'AWS::SecretsManager::Secret', {
    Properties: { Name: `payment-api/Test/keys/shard-${index}` },
  });
}

describe("the generated demo key in demo's home shard", () => {
  it.each([20, 64, 158, 256])(
    'with %i shards, copies it from shard 0 into shardOf("demo") when the stack is created',
    (shards) => {
      const template = sharedTemplate({ keyShards: shards });
      const home = shardOf('demo', shards);

      const placements = Object.values(resourcesOf(template, 'Custom::PaymentApiDemoKeyHome'));

      expect(home).not.toBe(0);
      expect(placements).toHaveLength(1);
      expect(placements[0]?.Properties).toMatchObject({
        ShardZero: { Ref: 'PaymentApiKeysSecret965420B1' },
        Home: { Ref: shardId(template, home) },
      });
    },
  );

  it('lets the function read shard 0 and read and write the home shard, nothing else', () => {
    const template = sharedTemplate({ keyShards: 64 });
    const home = shardId(template, 19);
    const functionId = onlyLogicalId(template, 'AWS::Lambda::Function', {}, /DemoKeyHome/);
    const statements = statementsOn(functionRoleStatements(template, functionId), 'secretsmanager:');

    const resourcesFor = (action: string): unknown[] =>
      statements
        .filter((statement) => [statement.Action].flat().includes(action))
        .flatMap((statement) => [statement.Resource].flat());

    expect(resourcesFor('secretsmanager:GetSecretValue')).toEqual([
      { Ref: 'PaymentApiKeysSecret965420B1' },
      { Ref: home },
    ]);
    expect(resourcesFor('secretsmanager:PutSecretValue')).toEqual([{ Ref: home }]);
    expect(statements.flatMap((statement) => [statement.Resource].flat())).toHaveLength(3);
  });

  it.each<[string, PaymentApiProps, boolean]>([
    ['one secret', {}, false],
    ['19 shards (demo lives in shard 0)', { keyShards: 19 }, false],
    ['64 shards without the demo app', { keyShards: 64, createDemoApp: false }, false],
    ['64 shards over an existing secret', { keyShards: 64 }, true],
  ])('adds nothing with %s', (_, props, existing) => {
    const { template } = synthesize(props, {
      extra: (stack) =>
        existing
          ? { keysSecret: secretsmanager.Secret.fromSecretNameV2(stack, 'Keys', 'payment-api/keys') }
          : {},
    });

    template.resourceCountIs('Custom::PaymentApiDemoKeyHome', 0);
  });
});
