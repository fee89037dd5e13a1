import type { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { readContext } from '../../../bin/context';
import { addPaymentApiStack } from '../../../bin/payment-api';
import { resourcesOf, unbundledApp } from '../../support/construct-template';

/**
 * Names scoped to a parent resource (a stage of one API, an inline policy of one role), and an alarm's
 * MetricName, which names the metric it watches rather than a resource: none of them can collide.
 */
const PARENT_SCOPED_NAMES = new Set(['StageName', 'PolicyName', 'MetricName']);

/**
 * Every physical name the template sets itself, as "<type>.<property>=<value>": literal values of top-level
 * properties named `Name` or `…Name`, and the CloudWatch metric names of web ACLs. Names left to
 * CloudFormation (a Ref, or no property at all) are unique by construction.
 */
function explicitPhysicalNames(stack: Stack): string[] {
  const names: string[] = [];
  for (const { Type: type, Properties: properties = {} } of Object.values(
    resourcesOf(Template.fromStack(stack)),
  )) {
    for (const [property, value] of Object.entries(properties)) {
      if (property.endsWith('Name') && !PARENT_SCOPED_NAMES.has(property) && typeof value === 'string') {
        names.push(`${type}.${property}=${value}`);
      }
    }
    // A web ACL's metric names are names of its own; an alarm's MetricName names what it watches.
    if (type !== 'AWS::WAFv2::WebACL') continue;
    const metricNames = JSON.stringify(properties).matchAll(/"MetricName":"([^"]+)"/g);
    for (const [, metricName] of metricNames) names.push(`${type}.MetricName=${metricName ?? ''}`);
  }
  return names;
}

function environment(env: string, domainName: string): Record<string, string> {
  return {
    env,
    wafRateLimit: '2000',
    rotationDays: '30',
    domainName,
    certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
    hostedZoneId: 'Z0123456789ABCDEFGHIJ',
    hostedZoneName: 'example.com',
  };
}

describe('two environments in one account and region', () => {
  let staging: Stack;
  let production: Stack;

  beforeAll(() => {
    const app = unbundledApp();
    staging = addPaymentApiStack(app, readContext(environment('staging', 'payments.staging.example.com')));
    production = addPaymentApiStack(app, readContext(environment('production', 'payments.example.com')));
  });

  it('are two stacks named after their environment', () => {
    expect([staging.stackName, production.stackName]).toEqual([
      'PaymentApi-staging',
      'PaymentApi-production',
    ]);
    expect(staging.templateOptions.description).toMatch(/^payment-api \(staging\): /);
  });

  it('share no physical name: every name a template sets comes from its stack name or its own domain', () => {
    // Act
    const stagingNames = explicitPhysicalNames(staging);
    const productionNames = explicitPhysicalNames(production);

    // Assert
    expect(stagingNames.filter((name) => productionNames.includes(name))).toEqual([]);
    expect(stagingNames).toEqual(
      expect.arrayContaining([
        'AWS::ApiGateway::RestApi.Name=PaymentApi-staging',
        expect.stringMatching(/^AWS::WAFv2::WebACL\.Name=PaymentApi-staging-/),
        expect.stringMatching(/^AWS::WAFv2::WebACL\.MetricName=PaymentApi-staging-/),
        'AWS::ApiGateway::DomainName.DomainName=payments.staging.example.com',
        'AWS::CloudWatch::Alarm.AlarmName=PaymentApi-staging-KeysUnavailable',
        expect.stringMatching(/^AWS::Logs::QueryDefinition\.Name=PaymentApi-staging\//),
      ]),
    );
  });

  it('leave the secret, log groups, functions and roles to names CloudFormation makes unique', () => {
    for (const stack of [staging, production]) {
      const names = explicitPhysicalNames(stack).map((name) => name.split('=')[0]);

      expect(
        names.filter((name) => /^AWS::(SecretsManager::|Logs::LogGroup|Lambda::|IAM::)/.test(name ?? '')),
      ).toEqual([]);
    }
  });
});
