import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Aspects, Duration, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { createApp, STACK_NAME } from '../../bin/payment-api';
import { PaymentApiStack, type PaymentApiStackProps } from '../../lib/payment-api-stack';

const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

const stacks = new Map<string, Stack>();

/**
 * The CDK app as `cdk synth` builds it, AwsSolutionsChecks included; cdk-nag needs no bundled code. Built once
 * per context and shared by the tests that read it.
 */
function appStack(context: Record<string, unknown> = {}): Stack {
  const key = JSON.stringify(context);
  let stack = stacks.get(key);
  if (stack === undefined) {
    const app = createApp(
      new App({ context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [], ...context } }),
    );
    stack = Stack.of(app.node.findChild(STACK_NAME));
    stacks.set(key, stack);
  }
  return stack;
}

/**
 * The stack built from typed props, as an app of your own would build it, AwsSolutionsChecks included: for the
 * options that have no context key yet.
 */
function propsStack(props: PaymentApiStackProps): Stack {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  const stack = new PaymentApiStack(app, STACK_NAME, props);
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return stack;
}

const KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const ROTATION = { rotationDays: '30' };
/** Monitoring on every option: a topic of its own for email notices, tuned thresholds, tracing. */
const MONITORING_BY_EMAIL: PaymentApiStackProps = {
  alarmEmail: 'oncall@example.com',
  metricsNamespace: 'Payments/Production',
  unauthorizedAlarmThreshold: 50,
  latencyAlarmThreshold: Duration.millis(800),
  serverErrorRateAlarmThreshold: 2,
  tracing: true,
};
const MONITORING_TO_TOPIC: PaymentApiStackProps = {
  alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall',
  tracing: true,
  rotation: { every: Duration.days(30) },
  existingSecret: 'payment-api/keys',
  secretKmsKeyArn: KMS_KEY_ARN,
};

interface Suppression {
  readonly id: string;
  readonly reason: string;
  readonly applies_to?: unknown[];
}

function suppressionsByResource(template: Template): Record<string, Suppression[]> {
  const resources = template.toJSON() as {
    Resources: Record<string, { Metadata?: { cdk_nag?: { rules_to_suppress: Suppression[] } } }>;
  };
  return Object.fromEntries(
    Object.entries(resources.Resources)
      .filter(([, resource]) => resource.Metadata?.cdk_nag !== undefined)
      .map(([id, resource]) => [id, resource.Metadata?.cdk_nag?.rules_to_suppress ?? []]),
  );
}

describe.each<[string, () => Stack]>([
  ['a new secret', () => appStack({})],
  [
    'an existing secret by name and a customer KMS key',
    () => appStack({ existingSecret: 'payment-api/keys', secretKmsKeyArn: KMS_KEY_ARN }),
  ],
  ['scheduled rotation of a new secret', () => appStack(ROTATION)],
  [
    'scheduled rotation of an existing secret by name with a customer KMS key',
    () =>
      appStack({
        ...ROTATION,
        rotationKeep: '3',
        existingSecret: 'payment-api/keys',
        secretKmsKeyArn: KMS_KEY_ARN,
      }),
  ],
  ['email alarm notices, tuned alarms and tracing', () => propsStack(MONITORING_BY_EMAIL)],
  [
    'an existing alarm topic, tracing, and rotation of an existing secret with a customer KMS key',
    () => propsStack(MONITORING_TO_TOPIC),
  ],
])('cdk-nag AwsSolutions checks on the app with %s', (_case, build) => {
  let stack: Stack;

  beforeAll(() => {
    stack = build();
  });

  it('leaves no unacknowledged error', () => {
    const errors = Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*'));

    expect(errors.map((error) => `${error.id}: ${JSON.stringify(error.entry.data)}`)).toEqual([]);
  });

  it('leaves no unacknowledged warning', () => {
    const warnings = Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*'));

    expect(warnings.map((warning) => `${warning.id}: ${JSON.stringify(warning.entry.data)}`)).toEqual([]);
  });
});

const ACKNOWLEDGED_API_FINDINGS = [
  'AWS::ApiGateway::Method ANY: AwsSolutions-APIG4, AwsSolutions-COG4',
  'AWS::ApiGateway::Method POST: AwsSolutions-APIG4, AwsSolutions-COG4',
  'AWS::ApiGateway::RestApi: AwsSolutions-APIG2',
  'AWS::ApiGateway::Stage: AwsSolutions-APIG3, AwsSolutions-APIG6',
];

describe.each<[string, () => Stack, string[]]>([
  [
    'without rotation',
    () => appStack({}),
    [...ACKNOWLEDGED_API_FINDINGS, 'AWS::SecretsManager::Secret: AwsSolutions-SMG4'],
  ],
  [
    'with scheduled rotation, which settles the secret rotation finding',
    () => appStack(ROTATION),
    ACKNOWLEDGED_API_FINDINGS,
  ],
  [
    "with tracing, whose X-Ray permission is acknowledged on the handler's policy, and email alarm notices",
    () => propsStack(MONITORING_BY_EMAIL),
    [
      ...ACKNOWLEDGED_API_FINDINGS,
      'AWS::IAM::Policy: AwsSolutions-IAM5',
      'AWS::SecretsManager::Secret: AwsSolutions-SMG4',
    ].sort(),
  ],
])('cdk-nag acknowledgements %s', (_case, build, expected) => {
  let template: Template;

  beforeAll(() => {
    template = Template.fromStack(build());
  });

  it('are made on the resources they concern, never for the whole stack', () => {
    // Arrange
    const kindOf = (logicalId: string): string => {
      const resource = (
        template.toJSON() as { Resources: Record<string, { Type: string; Properties?: unknown }> }
      ).Resources[logicalId];
      const method = (resource?.Properties as { HttpMethod?: string } | undefined)?.HttpMethod;
      return method ? `${resource?.Type ?? ''} ${method}` : (resource?.Type ?? '');
    };

    // Act
    const acknowledged = Object.entries(suppressionsByResource(template))
      .map(([logicalId, rules]) => `${kindOf(logicalId)}: ${rules.map((rule) => rule.id).join(', ')}`)
      .sort();

    // Assert
    expect(acknowledged).toEqual(expected);
    expect((template.toJSON() as { Metadata?: { cdk_nag?: unknown } }).Metadata?.cdk_nag).toBeUndefined();
  });

  it('each carry a reason of at least 10 characters', () => {
    const reasons = Object.values(suppressionsByResource(template))
      .flat()
      .map((rule) => ({ id: rule.id, reason: rule.reason }));

    expect(reasons.length).toBeGreaterThan(0);
    for (const { id, reason } of reasons) {
      expect({ id, long: reason.trim().length >= 10 }).toEqual({ id, long: true });
    }
  });
});
