import { Duration, type Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  DEMO_APP_DEFAULT_WARNING,
  DEMO_KEY_IS_LEGACY_WARNING,
  PaymentApiStack,
  type PaymentApiStackProps,
} from '../../../lib/payment-api-stack';
import { STACK_OUTPUTS } from '../../../tools/common/stack-outputs';
import {
  actionsOf,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  resourcesOf,
  sharedStackTemplate as synthesize,
  unbundledApp,
} from '../../support/construct-template';

const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';
const DOMAIN = { domainName: 'payments.example.com', certificateArn: CERTIFICATE_ARN };
const ZONE = { hostedZoneId: 'Z0123456789ABCDEFGHIJ', hostedZoneName: 'example.com' };
const COMPLETE_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf';
const PARTIAL_SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment/keys';

describe('PaymentApiStack with a new secret', () => {
  let template: Template;

  beforeAll(() => {
    template = synthesize();
  });

  it('outputs the full URL of POST /payment, stage included', () => {
    const apiId = onlyLogicalId(template, 'AWS::ApiGateway::RestApi');
    const stageId = onlyLogicalId(template, 'AWS::ApiGateway::Stage');

    template.hasOutput('PaymentUrl', {
      Value: {
        'Fn::Join': [
          '',
          [
            'https://',
            { Ref: apiId },
            '.execute-api.',
            { Ref: 'AWS::Region' },
            '.',
            { Ref: 'AWS::URLSuffix' },
            '/',
            { Ref: stageId },
            '/payment',
          ],
        ],
      },
    });
  });

  it('outputs the default key prefix', () => {
    template.hasOutput('KeyPrefix', { Value: 'pay' });
  });
});

describe('PaymentApiStack with scheduled rotation of an existing secret', () => {
  it('rotates a secret given by its complete ARN, granting that ARN exactly', () => {
    // Act
    const template = synthesize({
      existingSecret: COMPLETE_SECRET_ARN,
      rotation: { every: Duration.days(7) },
    });

    // Assert
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      SecretId: COMPLETE_SECRET_ARN,
      RotationRules: { ScheduleExpression: 'rate(7 days)' },
    });
    expect(
      functionRoleStatements(template, functionLogicalId(template, 'rotation')).filter((statement) =>
        actionsOf(statement).includes('secretsmanager:PutSecretValue'),
      ),
    ).toEqual([
      {
        Effect: 'Allow',
        Action: [
          'secretsmanager:DescribeSecret',
          'secretsmanager:GetSecretValue',
          'secretsmanager:PutSecretValue',
          'secretsmanager:UpdateSecretVersionStage',
        ],
        Resource: COMPLETE_SECRET_ARN,
      },
    ]);
  });
});

describe('PaymentApiStack with a custom domain', () => {
  it('outputs the URL on the domain, and where to point the name when it makes no DNS record', () => {
    // Act
    const template = synthesize(DOMAIN);

    // Assert
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'payments.example.com',
      RegionalCertificateArn: CERTIFICATE_ARN,
    });
    template.hasOutput('CustomDomainUrl', { Value: 'https://payments.example.com/payment' });
    template.hasOutput('CustomDomainTarget', {
      Description: 'Point payments.example.com here in DNS (CNAME, or a Route 53 alias A record)',
      Value: { 'Fn::GetAtt': [onlyLogicalId(template, 'AWS::ApiGateway::DomainName'), 'RegionalDomainName'] },
    });
  });

  it('makes the alias record in the hosted zone given by id and name', () => {
    // Act
    const template = synthesize({ ...DOMAIN, ...ZONE });

    // Assert
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'payments.example.com.',
      Type: 'A',
      HostedZoneId: 'Z0123456789ABCDEFGHIJ',
    });
  });

  it('gives the domain as the payment URL when the default endpoint is closed', () => {
    const template = synthesize({ ...DOMAIN, disableExecuteApiEndpoint: true });

    template.hasOutput('PaymentUrl', { Value: 'https://payments.example.com/payment' });
  });
});

describe('PaymentApiStack props validation', () => {
  it.each<[string, PaymentApiStackProps, string]>([
    [
      'an ARN of another service as the secret',
      { existingSecret: 'arn:aws:s3:::my-bucket' },
      'existingSecret must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>), got "arn:aws:s3:::my-bucket"',
    ],
    [
      'a secret name with a space',
      { existingSecret: 'payment keys' },
      'existingSecret must be a secret name (1 to 512 letters, digits or /_+=.@-) or a secret ARN, got "payment keys"',
    ],
    [
      'a KMS alias instead of a key ARN',
      { secretKmsKeyArn: 'alias/payment-api' },
      'secretKmsKeyArn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), got "alias/payment-api"',
    ],
    [
      'a domain without its certificate',
      { domainName: 'payments.example.com' },
      'domainName needs certificateArn: API Gateway serves a custom domain only with its certificate',
    ],
    [
      'a certificate without a domain',
      { certificateArn: CERTIFICATE_ARN },
      'certificateArn needs domainName: the certificate is for the custom domain',
    ],
    [
      'a hosted zone without a domain',
      { hostedZoneId: 'Z1', hostedZoneName: 'example.com' },
      'hostedZoneId needs domainName: the alias record is for the custom domain',
    ],
    [
      'a hosted zone id without its name',
      { ...DOMAIN, hostedZoneId: 'Z1' },
      'hostedZoneId and hostedZoneName go together: give both or neither',
    ],
    [
      'a certificate ARN of another service',
      { ...DOMAIN, certificateArn: 'arn:aws:iam::123456789012:server-certificate/x' },
      'certificateArn must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), got "arn:aws:iam::123456789012:server-certificate/x"',
    ],
    [
      'a hosted zone name with a trailing dot',
      { ...DOMAIN, hostedZoneId: 'Z1', hostedZoneName: 'example.com.' },
      'hostedZoneName must be a lower-case domain name such as payments.example.com, got "example.com."',
    ],
  ])('rejects %s', (_case, props, message) => {
    expect(() => synthesize(props)).toThrow(message);
  });

  // Which function is told it: payment-api 'passes ... the expiry warning only to the monitor'.
  it('passes the key expiry warning on to the construct, whose KeysExpiringSoon alarm names it', () => {
    synthesize({ keyExpiryWarning: Duration.days(30) }).hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'PaymentApi-KeysExpiringSoon',
      AlarmDescription: Match.stringLikeRegexp('expires within 30 days'),
    });
  });

  it('refuses the demo app with an existing secret, which is used as it is', () => {
    expect(() => synthesize({ existingSecret: 'payment-api/keys', createDemoApp: true })).toThrow(
      'createDemoApp cannot be used with existingSecret: the demo key is generated only in a new secret',
    );
  });
});

/** The outputs every stack has, by the names the tools read them by: the /payment URL, the secret ARN, the key prefix. */
const OUTPUTS = [STACK_OUTPUTS.keyPrefix, STACK_OUTPUTS.keysSecretArn, STACK_OUTPUTS.paymentUrl];
/** The key registry's: its shard count, its manifest and its shards' name prefix. */
const REGISTRY_OUTPUTS = [
  STACK_OUTPUTS.keyRegistry,
  STACK_OUTPUTS.keyShardNamePrefix,
  STACK_OUTPUTS.keyShards,
];

/** One of each way the stack's outputs can be made, and the outputs it then has. */
const OUTPUT_CONFIGURATIONS: [string, PaymentApiStackProps, string[]][] = [
  ['the defaults', {}, OUTPUTS],
  ['an existing secret by name', { existingSecret: 'payment-api/keys' }, OUTPUTS],
  ['an existing secret by complete ARN', { existingSecret: COMPLETE_SECRET_ARN }, OUTPUTS],
  ['an existing secret by partial ARN', { existingSecret: PARTIAL_SECRET_ARN }, OUTPUTS],
  [
    'a custom domain without a hosted zone, whose DNS target it names',
    DOMAIN,
    [...OUTPUTS, 'CustomDomainTarget', 'CustomDomainUrl'],
  ],
  [
    'a custom domain with its hosted zone, which then needs no target output',
    { ...DOMAIN, ...ZONE },
    [...OUTPUTS, 'CustomDomainUrl'],
  ],
  [
    'only a custom domain, without a hosted zone',
    { ...DOMAIN, disableExecuteApiEndpoint: true },
    [...OUTPUTS, 'CustomDomainTarget', 'CustomDomainUrl'],
  ],
  [
    'an environment with everything at the edge',
    {
      environmentName: 'production',
      ...DOMAIN,
      waf: { rateLimit: 2000 },
      rotation: { every: Duration.days(30) },
      monitoring: { alarmEmail: 'oncall@example.com' },
    },
    [...OUTPUTS, 'CustomDomainTarget', 'CustomDomainUrl'],
  ],
  ['a key registry of 8 shards', { keyShards: 8 }, [...OUTPUTS, ...REGISTRY_OUTPUTS]],
  [
    'the secret scanning endpoint, whose URL is registered with GitHub',
    { secretScanning: {} },
    [...OUTPUTS, 'SecretScanningUrl'],
  ],
  [
    'a key registry during a reshard, which names the previous count too',
    { keyShards: 8, keyShardsPrevious: 4 },
    [...OUTPUTS, ...REGISTRY_OUTPUTS, 'KeyShardsPrevious'],
  ],
];

describe('PaymentApiStack outputs', () => {
  it.each(OUTPUT_CONFIGURATIONS)(
    'are exactly those of %s, each with a literal description, as CloudFormation requires',
    (_case, props, names) => {
      const outputs = Object.entries(synthesize(props).findOutputs('*')) as [
        string,
        { Description?: unknown },
      ][];

      expect(outputs.map(([name]) => name).sort()).toEqual([...names].sort());
      for (const [name, output] of outputs) {
        expect({ name, description: typeof output.Description }).toEqual({ name, description: 'string' });
      }
    },
  );
});

/** Every logical ID the default stack had before lib/ was split into parts (the deployment's is a content hash). */
const DEPLOYED_IDS = [
  'PaymentApiKeysSecret965420B1',
  'PaymentApiHandlerLogs455CA6A8',
  'PaymentApiHandlerRole52232D0C',
  'PaymentApiHandlerRoleDefaultPolicyAF471D31',
  'PaymentApiHandlerBEAD40F5',
  'PaymentApiAccessLogs5125A1F6',
  'PaymentApiD76765E0',
  'PaymentApiDeploymentStageprod3919BADA',
  'PaymentApipaymentBEE97D4B',
  'PaymentApipaymentPOSTApiPermissionPaymentApi8A8DA387POSTpayment840B720C',
  'PaymentApipaymentPOSTCDFCE5BD',
  'PaymentApipaymentANY713C5BBD',
  'PaymentApiMISSINGAUTHENTICATIONTOKENC423A55B',
  'PaymentApiRESOURCENOTFOUNDCB9170B4',
  'PaymentApiTHROTTLEDCDF2CC3E',
  'PaymentApiQUOTAEXCEEDED60453830',
  'PaymentApiREQUESTTOOLARGE7DB4E0A4',
  'PaymentApiUNSUPPORTEDMEDIATYPE4544B161',
  'PaymentApiACCESSDENIED18796103',
  'PaymentApiWAFFILTERED17457AA7',
  'PaymentApiINTEGRATIONTIMEOUT9D427EFC',
  'PaymentApiINTEGRATIONFAILUREDF12C722',
  'PaymentApiDEFAULT4XXFE0C1885',
  'PaymentApiDEFAULT5XX89B98018',
  'PaymentApiMonitoringApiServerErrorsAlarm5B69DB51',
  'PaymentApiMonitoringApiLatencyP99Alarm5714E679',
  'PaymentApiMonitoringLambdaErrorsAlarm1A7C8455',
  'PaymentApiMonitoringLambdaThrottlesAlarmD8B643FF',
  'PaymentApiMonitoringKeysUnavailableAlarm52927E82',
  'PaymentApiMonitoringKeyRefreshFailingAlarm256D8904',
  'PaymentApiMonitoringUnauthorizedRequestsAlarmBA8F0620',
  'PaymentApiMonitoringDashboard9CC80FA0',
  'PaymentApiMonitoringRequestsByKeyQuery6DFA456D',
  'PaymentApiMonitoringUnauthorizedBySourceQuery90863962',
  'PaymentApiMonitoringKeyFailureTimelineQueryA6E4AC76',
  // Added since, with key expiry and allowlists: new resources, so nothing deployed is replaced.
  'PaymentApiMonitoringKeysExpiringSoonAlarmA17A390A',
  'PaymentApiMonitoringSecretNearlyFullAlarmDAE7CBDB',
  'PaymentApiMonitoringKeyRuleRefusalsQuery2F572BFE',
  // Added since, with the key registry: its monitor, its two alarms and its saved query, all new.
  'PaymentApiKeyRegistryMonitorFunctionLogs367E408D',
  'PaymentApiKeyRegistryMonitorFunctionRoleD4E90948',
  'PaymentApiKeyRegistryMonitorFunctionRoleDefaultPolicy325CE39F',
  'PaymentApiKeyRegistryMonitorFunction4BA87AF6',
  'PaymentApiKeyRegistryMonitorFunctionEventInvokeConfig070C33C2',
  'PaymentApiKeyRegistryMonitorSchedule7FE0D48F',
  'PaymentApiKeyRegistryMonitorScheduleAllowEventRulePaymentApiKeyRegistryMonitorFunction3AC71A4CF6DCB937',
  'PaymentApiMonitoringKeyShardsUnreadableAlarmDDD23244',
  'PaymentApiMonitoringKeyMonitorFailingAlarm22630546',
  'PaymentApiMonitoringRegistryByShardQuery63C59A7C',
];
const DEPLOYED_ROTATION_IDS = [
  'PaymentApiKeyRotationFunctionLogs37CC23ED',
  'PaymentApiKeyRotationFunctionRole1552E1C1',
  'PaymentApiKeyRotationFunctionRoleDefaultPolicy2D85CE53',
  'PaymentApiKeyRotationFunction090C73BB',
  'PaymentApiKeyRotationFunctionSecretsManagerInvokeDE1E86C6',
  'PaymentApiKeyRotationSchedule192F5682',
];
const DEPLOYED_ALARM_TOPIC_IDS = [
  'PaymentApiMonitoringAlarmTopicKeyB06BD67B',
  'PaymentApiMonitoringAlarmTopicA9D6684D',
  'PaymentApiMonitoringAlarmTopicPolicyEA185F50',
  'PaymentApiMonitoringAlarmTopiconcallexamplecom1458D22A',
];
const DEPLOYED_EDGE_IDS = [
  'PaymentApiFirewallWebAcl58DD371A',
  'PaymentApiFirewallAssociationF290B9A3',
  'PaymentApiCustomDomain7D342D3B',
  'PaymentApiCustomDomainAliasRecord7D7BB686',
];

function logicalIdsBesidesTheDeployment(template: Template): string[] {
  return Object.entries(resourcesOf(template))
    .filter(([, resource]) => resource.Type !== 'AWS::ApiGateway::Deployment')
    .map(([id]) => id)
    .sort();
}

describe('PaymentApiStack resources, for stacks deployed before lib/ was split into parts', () => {
  it.each<[string, PaymentApiStackProps, string[]]>([
    ['the defaults', {}, DEPLOYED_IDS],
    [
      'scheduled rotation, which adds only the RotationFailing alarm',
      { rotation: { every: Duration.days(30) } },
      [...DEPLOYED_IDS, ...DEPLOYED_ROTATION_IDS, 'PaymentApiMonitoringRotationFailingAlarmFE0ACFB6'],
    ],
    [
      'email alarm notices',
      { monitoring: { alarmEmail: 'oncall@example.com' } },
      [...DEPLOYED_IDS, ...DEPLOYED_ALARM_TOPIC_IDS],
    ],
    [
      'a web ACL and a custom domain with its alias record',
      { waf: { rateLimit: 2000 }, ...DOMAIN, ...ZONE },
      [...DEPLOYED_IDS, ...DEPLOYED_EDGE_IDS, 'PaymentApiCustomDomainMapPaymentApi8A8DA3870CECD7D7'],
    ],
    [
      'per-app rate limits, which add only the table, the RateLimiterUnavailable alarm and the "429s by app" query',
      { appRateLimit: { perSecond: 50, burst: 100, failure: 'closed' } },
      [
        ...DEPLOYED_IDS,
        'PaymentApiRateLimitTable5DE605EE',
        'PaymentApiMonitoringRateLimiterUnavailableAlarmDEA863C6',
        'PaymentApiMonitoringThrottledByAppQuery1751AEE2',
      ],
    ],
  ])('keep their logical IDs with %s', (_case, props, expected) => {
    expect(logicalIdsBesidesTheDeployment(synthesize(props))).toEqual([...expected].sort());
  });
});

describe('PaymentApiStack demo app', () => {
  function build(props: PaymentApiStackProps): Stack {
    return new PaymentApiStack(unbundledApp(), 'PaymentApi-staging', props);
  }

  function demoAppWarnings(stack: Stack): unknown[] {
    return Annotations.fromStack(stack)
      .findWarning('*', Match.stringLikeRegexp('createDemoApp'))
      .map((warning) => warning.id);
  }

  /** The secret as every stack deployed before createDemoApp has it: generation settings unchanged. */
  const GENERATED_DEMO_KEY = Match.objectEquals({
    SecretStringTemplate: '{}',
    GenerateStringKey: 'demo',
    ExcludePunctuation: true,
    PasswordLength: 48,
  });

  it('warns that the generated demo key is a legacy key when legacy keys are refused', () => {
    const stack = new PaymentApiStack(unbundledApp(), 'PaymentApi', { legacyKeys: false });
    const quiet = new PaymentApiStack(unbundledApp(), 'PaymentApi', {
      legacyKeys: false,
      createDemoApp: false,
    });

    const warned = (of: Stack) =>
      Annotations.fromStack(of).findWarning('*', Match.stringLikeRegexp(DEMO_KEY_IS_LEGACY_WARNING));
    expect(warned(stack)).toHaveLength(1);
    expect(warned(quiet)).toEqual([]);
  });

  it("warns, for an environment's secret, which starts empty, that an earlier stack must keep the demo app", () => {
    // Act
    const stack = build({ environmentName: 'staging' });

    // Assert
    const warnings = Annotations.fromStack(stack).findWarning(
      '/PaymentApi-staging/PaymentApi/KeysSecret/Default',
      Match.stringLikeRegexp(
        `A stack deployed before createDemoApp existed has the demo key.*set createDemoApp=true to keep its keys.*\\[ack: ${DEMO_APP_DEFAULT_WARNING}\\]`,
      ),
    );
    expect(warnings).toHaveLength(1);
  });

  it.each<[string, PaymentApiStackProps, Record<string, unknown>]>([
    [
      'keeps the demo key of the default stack, warning of nothing about the demo app',
      {},
      { GenerateSecretString: GENERATED_DEMO_KEY, SecretString: Match.absent() },
    ],
    [
      'keeps the demo key of an environment deployed earlier when createDemoApp is true',
      { environmentName: 'staging', createDemoApp: true },
      { GenerateSecretString: GENERATED_DEMO_KEY, SecretString: Match.absent() },
    ],
    [
      'starts an environment empty without a warning when createDemoApp is false',
      { environmentName: 'staging', createDemoApp: false },
      { SecretString: '{}', GenerateSecretString: Match.absent() },
    ],
    [
      'starts the default stack empty when createDemoApp is false',
      { createDemoApp: false },
      { SecretString: '{}', GenerateSecretString: Match.absent() },
    ],
  ])('%s, the secret retained on deletion and replacement', (_case, props, secret) => {
    const stack = build(props);

    Template.fromStack(stack).hasResource('AWS::SecretsManager::Secret', {
      Properties: Match.objectLike(secret),
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
    expect(demoAppWarnings(stack)).toEqual([]);
  });

  it("creates no secret and warns of nothing for an environment's existing secret", () => {
    const stack = build({ environmentName: 'production', existingSecret: 'payment-api/keys' });

    Template.fromStack(stack).resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(demoAppWarnings(stack)).toEqual([]);
  });
});
