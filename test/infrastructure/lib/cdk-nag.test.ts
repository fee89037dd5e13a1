import type { Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
// The app as `cdk synth` builds it, AwsSolutionsChecks included: cdk-nag needs no bundled code.
import { resourcesOf, type TemplateResource } from '../../support/construct-template';
import { sharedAppStack as appStack } from '../bin/app';

const KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const ROTATION = { rotationDays: '30' };
const WAF = { wafRateLimit: '2000' };
const EXISTING_WEB_ACL = {
  webAclArn:
    'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111',
};
const DOMAIN = {
  domainName: 'payments.example.com',
  certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
};
/** Monitoring on every option: a topic of its own for email notices, tuned thresholds, tracing. */
const MONITORING_BY_EMAIL = {
  alarmEmail: 'oncall@example.com',
  metricsNamespace: 'Payments/Production',
  unauthorizedAlarmThreshold: '50',
  latencyAlarmThresholdMs: '800',
  serverErrorRateAlarmThreshold: '2',
  tracing: 'true',
};
const MONITORING_TO_TOPIC = {
  alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall',
  tracing: 'true',
  ...ROTATION,
  existingSecret: 'payment-api/keys',
  secretKmsKeyArn: KMS_KEY_ARN,
};
/** Per-app rate limits with every key of theirs: a DynamoDB table, its grant, its alarm, widget and query. */
const RATE_LIMITS = { appRateLimit: '50', appRateBurst: '100', appRateLimitFailure: 'closed' };
/** The GitHub secret scanning endpoint: a function of its own, its route and model, its grants on every shard. */
const SECRET_SCANNING = { secretScanning: 'true' };
const EVERYTHING_AT_THE_EDGE = {
  env: 'staging',
  ...WAF,
  ...DOMAIN,
  hostedZoneId: 'Z0123456789ABCDEFGHIJ',
  hostedZoneName: 'example.com',
  disableExecuteApiEndpoint: 'true',
};

describe.each([
  ['a new secret', {}],
  [
    'an existing secret by name and a customer KMS key',
    { existingSecret: 'payment-api/keys', secretKmsKeyArn: KMS_KEY_ARN },
  ],
  ['scheduled rotation of a new secret', ROTATION],
  [
    'scheduled rotation of an existing secret by name with a customer KMS key',
    { ...ROTATION, rotationKeep: '3', existingSecret: 'payment-api/keys', secretKmsKeyArn: KMS_KEY_ARN },
  ],
  ['a new WAF web ACL', WAF],
  ['an existing WAF web ACL', EXISTING_WEB_ACL],
  ['a custom domain without a DNS record', DOMAIN],
  ['an environment, whose new secret starts as an empty keyring', { env: 'staging' }],
  [
    'an environment with an existing secret by ARN and a custom domain without a DNS record',
    {
      env: 'production',
      existingSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf',
      ...DOMAIN,
    },
  ],
  [
    'an environment, a new web ACL, a custom domain with its alias record and the default endpoint closed',
    EVERYTHING_AT_THE_EDGE,
  ],
  ['email alarm notices, tuned alarms and tracing', MONITORING_BY_EMAIL],
  [
    'an existing alarm topic, tracing, and rotation of an existing secret with a customer KMS key',
    MONITORING_TO_TOPIC,
  ],
  ['per-app rate limits, failing closed', RATE_LIMITS],
  ['per-app rate limits, email alarm notices and tracing', { ...RATE_LIMITS, ...MONITORING_BY_EMAIL }],
  ['a key registry of 64 shards', { keyShards: '64' }],
  ['a reshard from 4 shards to 8 under way', { keyShards: '8', keyShardsPrevious: '4' }],
  ['256 shards rotated on a schedule, in nested stacks', { keyShards: '256', ...ROTATION }],
  [
    '1,024 shards rotated on a schedule: shards 256 and up and the schedules in nested stacks, grants by name prefix',
    { keyShards: '1024', ...ROTATION },
  ],
  [
    'an existing secret by ARN as shard 0 of 16, with a customer KMS key and rotation',
    {
      keyShards: '16',
      existingSecret: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf',
      secretKmsKeyArn: KMS_KEY_ARN,
      ...ROTATION,
    },
  ],
  ['the secret scanning endpoint', SECRET_SCANNING],
  [
    'the secret scanning endpoint, reporting only, to an email topic, over 64 shards with a customer KMS key',
    {
      ...SECRET_SCANNING,
      secretScanningAction: 'report',
      ...MONITORING_BY_EMAIL,
      keyShards: '64',
      existingSecret: 'payment-api/keys',
      secretKmsKeyArn: KMS_KEY_ARN,
    },
  ],
  ['the secret scanning endpoint to an existing alarm topic', { ...SECRET_SCANNING, ...MONITORING_TO_TOPIC }],
])('cdk-nag AwsSolutions checks on the app with %s', (_case, context) => {
  let stack: Stack;

  beforeAll(() => {
    stack = appStack(context);
  });

  // A nested stack (the rotation schedules of shards 1 and up) is part of its parent's artifact: its findings are
  // among the parent's annotations.
  it('leaves no unacknowledged error or warning', () => {
    const annotations = Annotations.fromStack(stack);
    const findings = [
      ...annotations.findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...annotations.findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ];

    expect(findings.map((finding) => `${finding.id}: ${JSON.stringify(finding.entry.data)}`)).toEqual([]);
  });
});

const ACKNOWLEDGED_METHOD_FINDINGS = [
  'AWS::ApiGateway::Method ANY: AwsSolutions-APIG4, AwsSolutions-COG4',
  'AWS::ApiGateway::Method POST: AwsSolutions-APIG4, AwsSolutions-COG4',
  'AWS::ApiGateway::RestApi: AwsSolutions-APIG2',
];
const ACKNOWLEDGED_API_FINDINGS = [
  ...ACKNOWLEDGED_METHOD_FINDINGS,
  'AWS::ApiGateway::Stage: AwsSolutions-APIG3, AwsSolutions-APIG6',
];
/** With a web ACL on the stage, the missing-WAF finding is settled, not acknowledged. */
const ACKNOWLEDGED_API_FINDINGS_WITH_WAF = [
  ...ACKNOWLEDGED_METHOD_FINDINGS,
  'AWS::ApiGateway::Stage: AwsSolutions-APIG6',
];
const SECRET_ROTATION_FINDING = 'AWS::SecretsManager::Secret: AwsSolutions-SMG4';
/** The key registry monitor's BatchGetSecretValue, which IAM grants only on "*", acknowledged on its policy. */
const MONITOR_BATCH_READ_FINDING = 'AWS::IAM::Policy: AwsSolutions-IAM5';

describe.each<[string, Record<string, unknown>, string[]]>([
  [
    'without rotation',
    {},
    [...ACKNOWLEDGED_API_FINDINGS, MONITOR_BATCH_READ_FINDING, SECRET_ROTATION_FINDING],
  ],
  [
    'with scheduled rotation, which settles the secret rotation finding',
    ROTATION,
    [...ACKNOWLEDGED_API_FINDINGS, MONITOR_BATCH_READ_FINDING],
  ],
  [
    'with a new WAF web ACL, which settles the WAF finding',
    WAF,
    [...ACKNOWLEDGED_API_FINDINGS_WITH_WAF, MONITOR_BATCH_READ_FINDING, SECRET_ROTATION_FINDING],
  ],
  [
    'with an existing WAF web ACL, which settles the WAF finding',
    EXISTING_WEB_ACL,
    [...ACKNOWLEDGED_API_FINDINGS_WITH_WAF, MONITOR_BATCH_READ_FINDING, SECRET_ROTATION_FINDING],
  ],
  [
    'with a custom domain but no web ACL, which still acknowledges the WAF finding',
    DOMAIN,
    [...ACKNOWLEDGED_API_FINDINGS, MONITOR_BATCH_READ_FINDING, SECRET_ROTATION_FINDING],
  ],
  [
    "with tracing, whose X-Ray permission is acknowledged on the handler's policy, and email alarm notices",
    MONITORING_BY_EMAIL,
    [
      ...ACKNOWLEDGED_API_FINDINGS,
      'AWS::IAM::Policy: AwsSolutions-IAM5',
      MONITOR_BATCH_READ_FINDING,
      SECRET_ROTATION_FINDING,
    ].sort(),
  ],
  [
    'with per-app rate limits, whose counter table keeps no point-in-time recovery',
    RATE_LIMITS,
    [
      ...ACKNOWLEDGED_API_FINDINGS,
      'AWS::DynamoDB::Table: AwsSolutions-DDB3',
      MONITOR_BATCH_READ_FINDING,
      SECRET_ROTATION_FINDING,
    ].sort(),
  ],
  [
    'with 8 shards, each shard and the manifest acknowledging that nothing rotates them',
    { keyShards: '8' },
    [
      ...ACKNOWLEDGED_API_FINDINGS,
      MONITOR_BATCH_READ_FINDING,
      ...Array<string>(9).fill(SECRET_ROTATION_FINDING),
    ].sort(),
  ],
  [
    'with 8 shards rotated on a schedule, where only the manifest, which holds no key, is not rotated',
    { keyShards: '8', ...ROTATION },
    [...ACKNOWLEDGED_API_FINDINGS, MONITOR_BATCH_READ_FINDING, SECRET_ROTATION_FINDING].sort(),
  ],
  [
    'with the secret scanning endpoint, whose route needs no App-key (GitHub\'s signature is checked) and whose BatchGetSecretValue is granted on "*"',
    SECRET_SCANNING,
    [
      ...ACKNOWLEDGED_API_FINDINGS,
      'AWS::ApiGateway::Method POST: AwsSolutions-APIG4, AwsSolutions-COG4',
      MONITOR_BATCH_READ_FINDING,
      MONITOR_BATCH_READ_FINDING,
      SECRET_ROTATION_FINDING,
    ].sort(),
  ],
])('cdk-nag acknowledgements %s', (_case, context, expected) => {
  let template: Template;

  beforeAll(() => {
    template = Template.fromStack(appStack(context));
  });

  it('are made on the resources they concern, never for the whole stack, each with a reason of 10 characters or more', () => {
    // Arrange
    const suppressed = Object.values(resourcesOf(template)).filter((resource) => resource.Metadata?.cdk_nag);
    const rulesOf = (resource: TemplateResource) => resource.Metadata?.cdk_nag?.rules_to_suppress ?? [];
    const kindOf = ({ Type, Properties }: TemplateResource): string =>
      typeof Properties.HttpMethod === 'string' ? `${Type} ${Properties.HttpMethod}` : Type;
    const idsOf = (resource: TemplateResource) => rulesOf(resource).map((rule) => rule.id);

    // Act
    const acknowledged = suppressed.map((resource) => `${kindOf(resource)}: ${idsOf(resource).join(', ')}`);

    // Assert
    expect(acknowledged.sort()).toEqual(expected);
    expect((template.toJSON() as { Metadata?: { cdk_nag?: unknown } }).Metadata?.cdk_nag).toBeUndefined();
    const rules = suppressed.flatMap(rulesOf);
    expect(rules.filter((rule) => rule.reason.trim().length < 10).map((rule) => rule.id)).toEqual([]);
  });
});
