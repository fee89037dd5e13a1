import type { Template } from 'aws-cdk-lib/assertions';
import {
  MONITOR_READ_WORST_CASE_MS,
  monitorReadWorstCaseMs,
  monitorTimeout,
  MONITOR_TIMEOUT,
} from '../../../lib/key-registry-monitor';
import {
  bundledFunctionResource,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  resourceOf,
  sharedTemplate,
} from '../../support/construct-template';

describe('the key registry monitor of a one-shard stack', () => {
  let template: Template;
  let monitorId: string;
  let secretId: string;

  beforeAll(() => {
    template = sharedTemplate();
    monitorId = functionLogicalId(template, 'monitor');
    secretId = onlyLogicalId(template, 'AWS::SecretsManager::Secret');
  });

  it('runs on Node.js 24, arm64, with 512 MiB and 3 minutes (the reads of 256 shards at their bounds take at most a third of it), told the registry, the expiry window, the log level and the metrics’ namespace and service, and nothing else', () => {
    expect(resourceOf(template, monitorId)).toEqual(
      bundledFunctionResource(template, 'PaymentApiKeyRegistryMonitorFunction', {
        logRetentionDays: 30,
        MemorySize: 512,
        Timeout: MONITOR_TIMEOUT.toSeconds(),
        Variables: {
          KEYS_SECRET_ID: { Ref: secretId },
          KEY_EXPIRY_WARNING_DAYS: '14',
          LOG_LEVEL: 'info',
          METRICS_NAMESPACE: 'PaymentApi',
          SERVICE_NAME: 'Test',
        },
      }),
    );
    expect(MONITOR_READ_WORST_CASE_MS * 3).toBeLessThanOrEqual(MONITOR_TIMEOUT.toMilliseconds());
  });

  it('gives itself time for the reads of 1,024 shards at their bounds past 256: 195 s of reads, 6 minutes in all', () => {
    expect([1, 64, 256].map((slots) => monitorTimeout(slots).toSeconds())).toEqual([180, 180, 180]);
    expect(monitorReadWorstCaseMs(1_024)).toBe(195_000);
    expect(monitorTimeout(1_024).toMinutes()).toBe(6);
    expect(monitorReadWorstCaseMs(1_024) + 120_000).toBeLessThanOrEqual(
      monitorTimeout(1_024).toMilliseconds(),
    );
  });

  it('runs every hour from an EventBridge schedule, which alone may invoke it, and a run that fails is not retried', () => {
    // Arrange
    const ruleId = onlyLogicalId(template, 'AWS::Events::Rule');
    const permissionId = onlyLogicalId(template, 'AWS::Lambda::Permission', {
      Properties: { Principal: 'events.amazonaws.com' },
    });

    // Assert
    expect(resourceOf(template, ruleId).Properties).toMatchObject({
      ScheduleExpression: 'rate(1 hour)',
      State: 'ENABLED',
      Targets: [
        {
          Arn: { 'Fn::GetAtt': [monitorId, 'Arn'] },
          RetryPolicy: { MaximumEventAgeInSeconds: 3600, MaximumRetryAttempts: 2 },
        },
      ],
    });
    expect(resourceOf(template, permissionId).Properties).toEqual({
      Action: 'lambda:InvokeFunction',
      FunctionName: { 'Fn::GetAtt': [monitorId, 'Arn'] },
      Principal: 'events.amazonaws.com',
      SourceArn: { 'Fn::GetAtt': [ruleId, 'Arn'] },
    });
    template.hasResourceProperties('AWS::Lambda::EventInvokeConfig', {
      FunctionName: { Ref: monitorId },
      MaximumRetryAttempts: 0,
    });
  });

  it('may write its own log group and read the keys: GetSecretValue on the secret, BatchGetSecretValue, nothing more', () => {
    const logGroupId = onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /KeyRegistryMonitorFunctionLogs/);

    expect(functionRoleStatements(template, monitorId)).toEqual([
      {
        Effect: 'Allow',
        Action: ['logs:CreateLogStream', 'logs:PutLogEvents'],
        Resource: { 'Fn::GetAtt': [logGroupId, 'Arn'] },
      },
      {
        Effect: 'Allow',
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: { Ref: secretId },
      },
      { Effect: 'Allow', Action: 'secretsmanager:BatchGetSecretValue', Resource: '*' },
    ]);
  });

  it('acknowledges the "*" of BatchGetSecretValue on its own policy, with why', () => {
    const policyId = onlyLogicalId(
      template,
      'AWS::IAM::Policy',
      {},
      /^PaymentApiKeyRegistryMonitorFunctionRole/,
    );
    const acknowledged = resourceOf(template, policyId).Metadata?.cdk_nag?.rules_to_suppress ?? [];

    expect(acknowledged.map(({ id, applies_to }) => ({ id, applies_to }))).toEqual([
      { id: 'AwsSolutions-IAM5', applies_to: ['Resource::*'] },
    ]);
    expect(acknowledged[0]?.reason).toContain('supports no resource-level permissions');
  });
});
