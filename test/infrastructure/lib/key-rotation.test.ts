import { Duration } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { PaymentApiProps } from '../../../lib/payment-api';
import { ROTATION_STEP_WORST_CASE_MS, ROTATION_TIMEOUT } from '../../../lib/key-rotation';
import {
  bundledFunctionResource,
  actionsOf,
  constructUnbundled,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  policyStatements,
  resourceOf,
  statementsOn,
  synthesize,
  VIA_SECRETS_MANAGER,
} from '../../support/construct-template';

describe('PaymentApi scheduled rotation', () => {
  let template: Template;
  let rotationId: string;
  let secretId: string;
  /** Secrets Manager's permission to invoke the rotation function. */
  let permissionId: string;

  beforeAll(() => {
    ({ template } = synthesize({ rotation: { every: Duration.days(30) } }));
    rotationId = functionLogicalId(template, 'rotation');
    secretId = onlyLogicalId(template, 'AWS::SecretsManager::Secret');
    permissionId = onlyLogicalId(template, 'AWS::Lambda::Permission', {
      Properties: { Principal: 'secretsmanager.amazonaws.com' },
    });
  });

  describe('every 30 days with the default options', () => {
    it('runs Node.js 24 on arm64 with 256 MiB, a 60 s timeout, its own log group kept for one month, and only what it needs in its environment, once its role policy exists', () => {
      // The timeout outlasts a step whose every Secrets Manager call runs to its deadline.
      expect(ROTATION_STEP_WORST_CASE_MS).toBeLessThan(ROTATION_TIMEOUT.toMilliseconds());
      expect(resourceOf(template, rotationId)).toEqual(
        // Keep 2 keys, the period in hours (superseded keys expire by it), log at info.
        bundledFunctionResource(template, 'PaymentApiKeyRotationFunction', {
          logRetentionDays: 30,
          MemorySize: 256,
          Timeout: 60,
          Variables: {
            ROTATION_KEEP_KEYS: '2',
            ROTATION_PERIOD_HOURS: '720',
            LOG_LEVEL: 'info',
            KEY_PREFIX: 'pay',
          },
        }),
      );
    });

    it('lets the rotation function rotate only its one secret and write only its own log group', () => {
      const logGroupId = onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /KeyRotationFunctionLogs/);

      expect(functionRoleStatements(template, rotationId)).toEqual([
        {
          Effect: 'Allow',
          Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
          Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
        },
        {
          Effect: 'Allow',
          Action: [
            'secretsmanager:DescribeSecret',
            'secretsmanager:GetSecretValue',
            'secretsmanager:PutSecretValue',
            'secretsmanager:UpdateSecretVersionStage',
          ],
          Resource: { Ref: secretId },
        },
      ]);
    });

    // Its own statements, on no wildcard, are 'lets the rotation function rotate only its one secret ...'.
    it('grants GetRandomPassword, which IAM allows only on "*", to no function', () => {
      expect(policyStatements(template).flatMap(actionsOf)).not.toContain('secretsmanager:GetRandomPassword');
    });

    it('leaves the handler with read access only', () => {
      const handlerId = functionLogicalId(template, 'handler');
      const actions = functionRoleStatements(template, handlerId).flatMap(actionsOf);

      expect(actions.filter((action) => action.startsWith('secretsmanager:'))).toEqual([
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
      ]);
    });

    it('lets Secrets Manager invoke the rotation function on behalf of this account only', () => {
      expect(resourceOf(template, permissionId).Properties).toEqual({
        Action: 'lambda:InvokeFunction',
        FunctionName: { 'Fn::GetAtt': [rotationId, 'Arn'] },
        Principal: 'secretsmanager.amazonaws.com',
        SourceAccount: { Ref: 'AWS::AccountId' },
      });
    });

    it('schedules the rotation of the secret every 30 days, once Secrets Manager may invoke the function', () => {
      // Arrange
      const scheduleId = onlyLogicalId(template, 'AWS::SecretsManager::RotationSchedule');

      // Act
      const schedule = resourceOf(template, scheduleId);

      // Assert (RotateImmediatelyOnUpdate absent: the first rotation runs on deployment)
      expect(schedule.Properties).toEqual({
        SecretId: { Ref: secretId },
        RotationLambdaARN: { 'Fn::GetAtt': [rotationId, 'Arn'] },
        RotationRules: { ScheduleExpression: 'rate(30 days)' },
      });
      expect(schedule.DependsOn).toEqual([permissionId]);
    });
  });

  describe('every 12 hours, keeping 3 keys, with a customer key and every log option', () => {
    let custom: Template;
    let customRotationId: string;

    beforeAll(() => {
      ({ template: custom } = synthesize(
        {
          rotation: { every: Duration.hours(12), keep: 3 },
          logLevel: 'debug',
          logRetention: logs.RetentionDays.ONE_WEEK,
          keyPrefix: 'acme',
        },
        { extra: (stack) => ({ secretEncryptionKey: new kms.Key(stack, 'Key') }) },
      ));
      customRotationId = functionLogicalId(custom, 'rotation');
    });

    it("tells the rotation function to keep 3 keys, a 12-hour period, to log at debug and the stack's key prefix", () => {
      expect(resourceOf(custom, customRotationId).Properties.Environment).toEqual({
        Variables: {
          ROTATION_KEEP_KEYS: '3',
          ROTATION_PERIOD_HOURS: '12',
          LOG_LEVEL: 'debug',
          KEY_PREFIX: 'acme',
        },
      });
    });

    it('rotates every 12 hours', () => {
      custom.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
        RotationRules: { ScheduleExpression: 'rate(12 hours)' },
      });
    });

    it('keeps the rotation logs as long as the other log groups', () => {
      custom.resourceCountIs('AWS::Logs::LogGroup', 4);
      custom.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 7 });
    });

    it('lets the rotation function decrypt and generate data keys with the customer key, via Secrets Manager only', () => {
      const keyId = onlyLogicalId(custom, 'AWS::KMS::Key');
      expect(statementsOn(functionRoleStatements(custom, customRotationId), 'kms:')).toEqual([
        {
          Effect: 'Allow',
          Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
          Resource: { 'Fn::GetAtt': [keyId, 'Arn'] },
          Condition: VIA_SECRETS_MANAGER,
        },
      ]);
    });
  });
});

describe('PaymentApi rotation options validation', () => {
  it.each<[string, PaymentApiProps, string]>([
    [
      'a rotation more often than every 4 hours',
      { rotation: { every: Duration.hours(3) } },
      'rotation.every must be a whole number of hours from 4 to 24000, got 3',
    ],
    [
      'a rotation period over 1000 days',
      { rotation: { every: Duration.days(1001) } },
      'rotation.every must be a whole number of hours from 4 to 24000, got 24024',
    ],
    [
      'keeping a single key',
      { rotation: { every: Duration.days(30), keep: 1 } },
      'rotation.keep must be a whole number from 2 to 10, got 1',
    ],
    [
      'keeping 11 keys (each superseded key costs room in the secret)',
      { rotation: { every: Duration.days(30), keep: 11 } },
      'rotation.keep must be a whole number from 2 to 10, got 11',
    ],
  ])('rejects %s', (_case, props, message) => {
    expect(() => {
      constructUnbundled(props);
    }).toThrow(message);
  });

  it.each<[string, PaymentApiProps]>([
    ['every 4 hours, keeping 2 keys', { rotation: { every: Duration.hours(4), keep: 2 } }],
    ['every 1000 days, keeping 10 keys', { rotation: { every: Duration.days(1000), keep: 10 } }],
  ])('accepts a rotation %s', (_case, props) => {
    expect(() => {
      constructUnbundled(props);
    }).not.toThrow();
  });
});
