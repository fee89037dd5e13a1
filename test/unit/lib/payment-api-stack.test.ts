import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { PaymentApiStack, type PaymentApiStackProps } from '../../../lib/payment-api-stack';

const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

/** These assertions need the template, not the bundled code: skip esbuild. */
function synthesize(props: PaymentApiStackProps = {}): Template {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, 'aws:cdk:bundling-stacks': [] } });
  return Template.fromStack(new PaymentApiStack(app, 'PaymentApi', props));
}

function logicalId(template: Template, type: string): string {
  const ids = Object.keys(template.findResources(type));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Condition?: unknown;
}

function statementsFor(template: Template, actionPrefix: string): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .flatMap(
      (policy) =>
        (policy as { Properties: { PolicyDocument: { Statement: Statement[] } } }).Properties.PolicyDocument
          .Statement,
    )
    .filter((statement) => [statement.Action].flat().some((action) => action.startsWith(actionPrefix)));
}

/** The ARN CDK builds from a secret name in an environment-agnostic stack. */
function partialArnJoin(name: string): unknown {
  return {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':secretsmanager:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        `:secret:${name}`,
      ],
    ],
  };
}

describe('PaymentApiStack with a new secret', () => {
  let template: Template;

  beforeAll(() => {
    template = synthesize();
  });

  it('outputs the full URL of POST /payment, stage included', () => {
    const apiId = logicalId(template, 'AWS::ApiGateway::RestApi');
    const stageId = logicalId(template, 'AWS::ApiGateway::Stage');

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

  it('has exactly two outputs: the /payment URL and the secret ARN', () => {
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual(['KeysSecretArn', 'PaymentUrl']);
  });

  it('outputs the ARN of the secret it created', () => {
    template.hasOutput('KeysSecretArn', {
      Value: { Ref: logicalId(template, 'AWS::SecretsManager::Secret') },
    });
  });

  it('creates exactly one secret, retained on deletion', () => {
    template.resourceCountIs('AWS::SecretsManager::Secret', 1);
    template.hasResource('AWS::SecretsManager::Secret', { DeletionPolicy: 'Retain' });
  });
});

describe('PaymentApiStack with an existing secret', () => {
  it('uses a secret given by name, with the 6-character suffix wildcard CDK requires for names', () => {
    // Act
    const template = synthesize({ existingSecret: 'payment-api/keys' });

    // Assert
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ KEYS_SECRET_ID: partialArnJoin('payment-api/keys') }) },
    });
    expect(statementsFor(template, 'secretsmanager:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: partialArnJoin('payment-api/keys-??????'),
      },
    ]);
    template.hasOutput('KeysSecretArn', { Value: partialArnJoin('payment-api/keys') });
  });

  it('uses a secret given by its complete ARN, granting that ARN exactly', () => {
    // Arrange
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf';

    // Act
    const template = synthesize({ existingSecret: arn });

    // Assert
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ KEYS_SECRET_ID: arn }) },
    });
    expect(statementsFor(template, 'secretsmanager:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: arn,
      },
    ]);
    template.hasOutput('KeysSecretArn', { Value: arn });
  });

  it('uses a secret given by a partial ARN, granting any suffix of that name only', () => {
    // Arrange
    const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment/keys';

    // Act
    const template = synthesize({ existingSecret: arn });

    // Assert
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    expect(statementsFor(template, 'secretsmanager:')).toEqual([
      {
        Effect: 'Allow',
        Action: ['secretsmanager:DescribeSecret', 'secretsmanager:GetSecretValue'],
        Resource: `${arn}-??????`,
      },
    ]);
  });

  it('lets the handler decrypt with the given KMS key, only through Secrets Manager', () => {
    // Arrange
    const keyArn = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';

    // Act
    const template = synthesize({ existingSecret: 'payment-api/keys', secretKmsKeyArn: keyArn });

    // Assert
    expect(statementsFor(template, 'kms:')).toEqual([
      {
        Effect: 'Allow',
        Action: 'kms:Decrypt',
        Resource: keyArn,
        Condition: {
          StringEquals: {
            'kms:ViaService': {
              'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']],
            },
          },
        },
      },
    ]);
  });
});

describe('PaymentApiStack with scheduled rotation of an existing secret', () => {
  const ROTATION_ACTIONS = [
    'secretsmanager:DescribeSecret',
    'secretsmanager:GetSecretValue',
    'secretsmanager:PutSecretValue',
    'secretsmanager:UpdateSecretVersionStage',
  ];
  const completeArn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf';

  it.each<[string, string, unknown, unknown]>([
    [
      'given by name, granting any suffix of that name only',
      'payment-api/keys',
      partialArnJoin('payment-api/keys'),
      partialArnJoin('payment-api/keys-??????'),
    ],
    ['given by its complete ARN, granting that ARN exactly', completeArn, completeArn, completeArn],
  ])('rotates a secret %s', (_case, existingSecret, secretId, grantedArn) => {
    // Act
    const template = synthesize({ existingSecret, rotation: { every: Duration.days(7) } });

    // Assert
    template.resourceCountIs('AWS::SecretsManager::Secret', 0);
    template.hasResourceProperties('AWS::SecretsManager::RotationSchedule', {
      SecretId: secretId,
      RotationRules: { ScheduleExpression: 'rate(7 days)' },
    });
    expect(
      statementsFor(template, 'secretsmanager:').filter((statement) =>
        [statement.Action].flat().includes('secretsmanager:PutSecretValue'),
      ),
    ).toEqual([{ Effect: 'Allow', Action: ROTATION_ACTIONS, Resource: grantedArn }]);
  });
});

describe('PaymentApiStack with a custom domain', () => {
  const domain = {
    domainName: 'payments.example.com',
    certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012',
  };

  it('outputs the URL on the domain, and where to point the name when it makes no DNS record', () => {
    // Act
    const template = synthesize(domain);

    // Assert
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: 'payments.example.com',
      RegionalCertificateArn: domain.certificateArn,
    });
    template.hasOutput('CustomDomainUrl', { Value: 'https://payments.example.com/payment' });
    template.hasOutput('CustomDomainTarget', {
      Value: { 'Fn::GetAtt': [logicalId(template, 'AWS::ApiGateway::DomainName'), 'RegionalDomainName'] },
    });
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual([
      'CustomDomainTarget',
      'CustomDomainUrl',
      'KeysSecretArn',
      'PaymentUrl',
    ]);
  });

  it('makes the alias record in the hosted zone given by id and name, and then needs no target output', () => {
    // Act
    const template = synthesize({
      ...domain,
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      hostedZoneName: 'example.com',
    });

    // Assert
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: 'payments.example.com.',
      Type: 'A',
      HostedZoneId: 'Z0123456789ABCDEFGHIJ',
    });
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual([
      'CustomDomainUrl',
      'KeysSecretArn',
      'PaymentUrl',
    ]);
  });

  it('gives the domain as the payment URL when the default endpoint is closed', () => {
    const template = synthesize({ ...domain, disableExecuteApiEndpoint: true });

    template.hasOutput('PaymentUrl', { Value: 'https://payments.example.com/payment' });
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: true });
  });

  it('passes the firewall props on to the construct', () => {
    const template = synthesize({ waf: { rateLimit: 500 } });

    template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
    template.hasResourceProperties('AWS::WAFv2::WebACL', {
      Rules: Match.arrayWith([
        Match.objectLike({ Statement: { RateBasedStatement: Match.objectLike({ Limit: 500 }) } }),
      ]),
    });
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
      { certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/1234' },
      'certificateArn needs domainName: the certificate is for the custom domain',
    ],
    [
      'a hosted zone without a domain',
      { hostedZoneId: 'Z1', hostedZoneName: 'example.com' },
      'hostedZoneId needs domainName: the alias record is for the custom domain',
    ],
    [
      'a hosted zone id without its name',
      {
        domainName: 'payments.example.com',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/1234',
        hostedZoneId: 'Z1',
      },
      'hostedZoneId and hostedZoneName go together: give both or neither',
    ],
    [
      'a certificate ARN of another service',
      {
        domainName: 'payments.example.com',
        certificateArn: 'arn:aws:iam::123456789012:server-certificate/x',
      },
      'certificateArn must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), got "arn:aws:iam::123456789012:server-certificate/x"',
    ],
    [
      'a hosted zone name with a trailing dot',
      {
        domainName: 'payments.example.com',
        certificateArn: 'arn:aws:acm:eu-west-1:123456789012:certificate/1234',
        hostedZoneId: 'Z1',
        hostedZoneName: 'example.com.',
      },
      'hostedZoneName must be a lower-case domain name such as payments.example.com, got "example.com."',
    ],
  ])('rejects %s', (_case, props, message) => {
    expect(() => synthesize(props)).toThrow(message);
  });

  it('passes construct options on to the construct', () => {
    expect(() => synthesize({ memorySize: 64 })).toThrow(
      'memorySize must be a whole number of MiB from 128 to 10240, got 64',
    );
  });
});
