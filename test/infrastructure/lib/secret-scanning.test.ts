import { Match, Template } from 'aws-cdk-lib/assertions';
import { SECRET_SCANNING_THROTTLING, SECRET_SCANNING_TIMEOUT } from '../../../lib/secret-scanning';
import { REPORT_LIMITS } from '../../../lambda/secret-scanning/settings';
import {
  actionsOf,
  constructUnbundled,
  functionRoleStatements,
  onlyLogicalId,
  resourcesOf,
  synthesize,
} from '../../support/construct-template';
import { sharedAppStack } from '../bin/app';

const FUNCTION_ID = /^PaymentApiSecretScanningFunction[0-9A-F]{8}$/;

/** The app's stack as `cdk synth` builds it from this context, as a template. */
function appTemplate(context: Record<string, unknown>): Record<string, unknown> {
  return Template.fromStack(sharedAppStack(context)).toJSON();
}

function functionId(template: Template): string {
  return onlyLogicalId(template, 'AWS::Lambda::Function', {}, FUNCTION_ID);
}

describe('without secretScanning', () => {
  it('has nothing of the endpoint: no function, route, model, validator, route throttle or output', () => {
    const template = JSON.stringify(appTemplate({}));

    expect(template).not.toMatch(/SecretScanning|secret-scanning|SECRET_SCANNING/);
    expect(template).not.toContain('RequestValidator');
    expect(template).not.toContain('AWS::ApiGateway::Model');
  });
});

describe('with secretScanning', () => {
  let template: Template;
  let fnId: string;

  beforeAll(() => {
    ({ template } = synthesize({ secretScanning: {}, monitoring: { alarmEmail: 'oncall@example.com' } }));
    fnId = functionId(template);
  });

  it('builds a function of its own, under a construct id that names it', () => {
    expect(resourcesOf(template)[fnId]?.Properties).toMatchObject({
      Runtime: 'nodejs24.x',
      Handler: 'index.handler',
      Timeout: SECRET_SCANNING_TIMEOUT.toSeconds(),
    });
    expect(SECRET_SCANNING_TIMEOUT.toSeconds()).toBeLessThan(29);
  });

  it("tells it the registry, GitHub's keys URL, the action, the stack's key prefix and the alarm topic", () => {
    const variables = (
      resourcesOf(template)[fnId]?.Properties.Environment as { Variables: Record<string, unknown> }
    ).Variables;

    expect(variables).toEqual({
      KEYS_SECRET_ID: { Ref: expect.stringMatching(/^PaymentApiKeysSecret/) as unknown },
      SECRET_SCANNING_KEYS_URL: 'https://api.github.com/meta/public_keys/secret_scanning',
      SECRET_SCANNING_ACTION: 'revoke',
      KEY_PREFIX: 'pay',
      LOG_LEVEL: 'info',
      ALARM_TOPIC_ARN: { Ref: expect.stringMatching(/^PaymentApiMonitoringAlarmTopic/) as unknown },
    });
  });

  it('routes POST /secret-scanning to it without any authorizer or API key', () => {
    const resourceId = onlyLogicalId(template, 'AWS::ApiGateway::Resource', {
      Properties: { PathPart: 'secret-scanning' },
    });

    template.hasResourceProperties('AWS::ApiGateway::Method', {
      HttpMethod: 'POST',
      ResourceId: { Ref: resourceId },
      AuthorizationType: 'NONE',
      ApiKeyRequired: Match.absent(),
      Integration: Match.objectLike({
        Type: 'AWS_PROXY',
        Uri: Match.objectLike({
          'Fn::Join': Match.arrayWith([Match.arrayWith([{ 'Fn::GetAtt': [fnId, 'Arn'] }])]),
        }),
      }),
      RequestValidatorId: { Ref: Match.stringLikeRegexp('SecretScanningReportValidator') },
      RequestModels: { 'application/json': { Ref: Match.stringLikeRegexp('SecretScanningReport') } },
    });
  });

  it('has API Gateway check the body against the report shape, with the same bounds as the function', () => {
    template.hasResourceProperties('AWS::ApiGateway::RequestValidator', {
      ValidateRequestBody: true,
      ValidateRequestParameters: false,
    });
    template.hasResourceProperties('AWS::ApiGateway::Model', {
      ContentType: 'application/json',
      Schema: Match.objectLike({
        type: 'array',
        maxItems: REPORT_LIMITS.maxTokens,
        items: Match.objectLike({
          required: ['token', 'type'],
          properties: Match.objectLike({
            token: { type: 'string', maxLength: REPORT_LIMITS.maxTokenLength, minLength: 1 },
          }),
        }),
      }),
    });
  });

  it('throttles the route on its own, beside the stage throttle', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([
        Match.objectLike({
          HttpMethod: 'POST',
          ResourcePath: '/~1secret-scanning',
          ThrottlingRateLimit: SECRET_SCANNING_THROTTLING.rateLimit,
          ThrottlingBurstLimit: SECRET_SCANNING_THROTTLING.burstLimit,
        }),
      ]),
    });
  });

  it('lets the role read and write the key shards, publish to the alarm topic and write its logs, nothing else', () => {
    const actions = functionRoleStatements(template, fnId).flatMap(actionsOf).sort();

    expect(actions).toEqual(
      [
        'kms:Decrypt',
        'kms:GenerateDataKey',
        'logs:CreateLogStream',
        'logs:PutLogEvents',
        'secretsmanager:BatchGetSecretValue',
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
        'sns:Publish',
      ].sort(),
    );
    const statements = functionRoleStatements(template, fnId);
    const writes = statements.find((statement) =>
      actionsOf(statement).includes('secretsmanager:PutSecretValue'),
    );
    expect(JSON.stringify(writes?.Resource)).toMatch(/PaymentApiKeysSecret/);
    const publish = statements.find((statement) => actionsOf(statement).includes('sns:Publish'));
    expect(publish?.Resource).toEqual({
      Ref: expect.stringMatching(/^PaymentApiMonitoringAlarmTopic/) as unknown,
    });
    const keyUse = statements.find((statement) => actionsOf(statement).includes('kms:GenerateDataKey'));
    expect(keyUse?.Condition).toEqual({
      StringEquals: {
        'kms:ViaService': { 'Fn::Join': ['', ['sns.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
      },
    });
  });
});

describe('with secretScanning over 64 shards', () => {
  it('grants read and write on every other shard by ARN in managed policies, and nothing else there', () => {
    const { template } = synthesize({ secretScanning: { action: 'report' }, keyShards: 64 });
    const fnId = functionId(template);
    // The grants on shards 1 and up, in the managed policies attached to the function's role.
    const statements = functionRoleStatements(template, fnId, 'AWS::IAM::ManagedPolicy');

    expect(new Set(statements.flatMap(actionsOf))).toEqual(
      new Set([
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ]),
    );
    expect(statements.flatMap((statement) => statement.Resource as unknown[])).toHaveLength(63);
    expect(resourcesOf(template)[fnId]?.Properties.Environment).toMatchObject({
      Variables: { KEY_SHARDS: '64', SECRET_SCANNING_ACTION: 'report' },
    });
  });
});

describe('invalid secret scanning options', () => {
  it.each([
    [
      { keysUrl: 'http://keys.example.com/k' },
      'secretScanning.keysUrl must use https (plain http only to a loopback address, for tests)',
    ],
    [{ keysUrl: 'https://user:secret@example.com/k' }, 'secretScanning.keysUrl must not carry credentials'],
  ])('throw one line that does not repeat the URL: %j', (secretScanning, message) => {
    expect(() => {
      constructUnbundled({ secretScanning });
    }).toThrow(message);
    expect(() => {
      constructUnbundled({ secretScanning });
    }).not.toThrow(/example\.com/);
  });
});
