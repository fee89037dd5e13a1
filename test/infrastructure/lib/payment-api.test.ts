import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Match, type Template } from 'aws-cdk-lib/assertions';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { readRateLimitSettings } from '../../../lambda/payment/rate-limit/settings';
import { ERROR_RESPONSES } from '../../../shared/api/responses';
import * as bundledFunction from '../../../lib/bundled-function';
import type { PaymentApiProps } from '../../../lib/payment-api';
import {
  bundledFunctionResource,
  constructUnbundled,
  functionEnvironment,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  policyStatements,
  resourceOf,
  sharedTemplate,
  synthesize,
  type Statement,
} from '../../support/construct-template';

const PROJECT_ROOT = path.join(__dirname, '..', '..', '..');

// A pass-through spy: the module's exports are not reconfigurable once compiled, so the spy is made in its place.
jest.mock('../../../lib/bundled-function', () => {
  const actual = jest.requireActual<typeof bundledFunction>('../../../lib/bundled-function');
  return { ...actual, createBundledFunction: jest.fn(actual.createBundledFunction) };
});

/** The file the payment Lambda is bundled from, relative to the project: unit tests never bundle, so it is caught. */
function handlerEntry(props: PaymentApiProps): string {
  const build = jest.mocked(bundledFunction.createBundledFunction);
  build.mockClear();
  synthesize(props);
  const entries = build.mock.calls.filter(([, id]) => id === 'Handler').map(([, , options]) => options.entry);
  expect(entries).toHaveLength(1);
  return path.relative(PROJECT_ROOT, entries[0] ?? '');
}

/** The statements of the payment Lambda's role. */
function handlerStatements(template: Template): Statement[] {
  return functionRoleStatements(template, functionLogicalId(template, 'handler'));
}

/** The API's /payment resource. */
const PAYMENT_RESOURCE = { Properties: { PathPart: 'payment' } };

describe('PaymentApi with default props', () => {
  let template: Template;
  let secretId: string;

  beforeAll(() => {
    template = sharedTemplate();
    secretId = onlyLogicalId(template, 'AWS::SecretsManager::Secret');
  });

  describe('handler function', () => {
    it('runs Node.js 24 on arm64 with 256 MiB, a 10 s timeout and its own log group kept for one month, told the secret ARN, the cache settings and the metrics settings and nothing else, once its role policy exists', () => {
      // Two functions: this one and the key registry monitor (test/infrastructure/lib/key-registry-monitor.test.ts).
      template.resourceCountIs('AWS::Lambda::Function', 2);
      expect(resourceOf(template, functionLogicalId(template, 'handler'))).toEqual(
        bundledFunctionResource(template, 'PaymentApiHandler', {
          logRetentionDays: 30,
          MemorySize: 256,
          Timeout: 10,
          Variables: {
            KEYS_SECRET_ID: { Ref: secretId },
            KEY_CACHE_TTL_SECONDS: '60',
            KEY_MAX_STALE_SECONDS: '900',
            LOG_LEVEL: 'info',
            METRICS_NAMESPACE: 'PaymentApi',
            SERVICE_NAME: 'Test',
            KEY_PREFIX: 'pay',
            LEGACY_KEYS: 'true',
          },
        }),
      );
    });
  });

  describe('permissions', () => {
    it('lets the handler read only its one secret and write only its own log group', () => {
      const logGroupId = onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /HandlerLogs/);

      expect(handlerStatements(template)).toEqual([
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
      ]);
    });

    it('uses no wildcard resource and no managed policy', () => {
      // Beside the monitor's BatchGetSecretValue, which IAM only grants on "*" (lib/key-registry-monitor.ts).
      expect(
        policyStatements(template).filter((statement) => JSON.stringify(statement.Resource).includes('*')),
      ).toEqual([{ Effect: 'Allow', Action: 'secretsmanager:BatchGetSecretValue', Resource: '*' }]);
      template.resourceCountIs('AWS::IAM::ManagedPolicy', 0);
      template.allResourcesProperties('AWS::IAM::Role', { ManagedPolicyArns: Match.absent() });
    });
  });

  describe('REST API', () => {
    it('serves POST /payment through a Lambda proxy integration', () => {
      const handlerId = functionLogicalId(template, 'handler');
      const resourceId = onlyLogicalId(template, 'AWS::ApiGateway::Resource', PAYMENT_RESOURCE);

      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: 'POST',
        ResourceId: { Ref: resourceId },
        AuthorizationType: 'NONE',
        Integration: {
          Type: 'AWS_PROXY',
          IntegrationHttpMethod: 'POST',
          Uri: Match.objectLike({
            'Fn::Join': Match.arrayWith([Match.arrayWith([{ 'Fn::GetAtt': [handlerId, 'Arn'] }])]),
          }),
        },
      });
    });

    it('lets API Gateway invoke the handler for POST /payment only', () => {
      const handlerId = functionLogicalId(template, 'handler');

      expect(
        Object.values(
          template.findResources('AWS::Lambda::Permission', {
            Properties: { FunctionName: { 'Fn::GetAtt': [handlerId, 'Arn'] } },
          }),
        ),
      ).toEqual([
        {
          Type: 'AWS::Lambda::Permission',
          Properties: {
            Action: 'lambda:InvokeFunction',
            FunctionName: { 'Fn::GetAtt': [handlerId, 'Arn'] },
            Principal: 'apigateway.amazonaws.com',
            SourceArn: { 'Fn::Join': ['', expect.arrayContaining(['/POST/payment']) as unknown] },
          },
        },
      ]);
    });

    it('answers any other method on /payment with 405 from a mock, never invoking the handler', () => {
      const resourceId = onlyLogicalId(template, 'AWS::ApiGateway::Resource', PAYMENT_RESOURCE);
      const headers = {
        'method.response.header.Content-Type': "'application/json'",
        'method.response.header.Cache-Control': "'no-store'",
        'method.response.header.X-Content-Type-Options': "'nosniff'",
        'method.response.header.Allow': "'POST'",
      };

      template.hasResourceProperties('AWS::ApiGateway::Method', {
        HttpMethod: 'ANY',
        ResourceId: { Ref: resourceId },
        Integration: {
          Type: 'MOCK',
          PassthroughBehavior: 'WHEN_NO_TEMPLATES',
          RequestTemplates: Match.absent(),
          IntegrationResponses: [
            {
              StatusCode: '405',
              SelectionPattern: Match.absent(),
              ResponseParameters: headers,
              ResponseTemplates: {
                'application/json': JSON.stringify({
                  code: 'method_not_allowed',
                  message: ERROR_RESPONSES.methodNotAllowed.message,
                }),
              },
            },
          ],
        },
        MethodResponses: [
          {
            StatusCode: '405',
            ResponseParameters: Object.fromEntries(Object.keys(headers).map((name) => [name, true])),
          },
        ],
      });
    });

    it('throttles the stage "prod" at 50 requests per second with bursts of 100', () => {
      template.hasResourceProperties('AWS::ApiGateway::Stage', {
        StageName: 'prod',
        MethodSettings: [
          Match.objectLike({
            HttpMethod: '*',
            ResourcePath: '/*',
            ThrottlingRateLimit: 50,
            ThrottlingBurstLimit: 100,
          }),
        ],
      });
    });

    it('writes JSON access logs, without request headers, to a log group kept for one month', () => {
      // Arrange
      const accessLogsId = onlyLogicalId(
        template,
        'AWS::Logs::LogGroup',
        { Properties: { RetentionInDays: 30 } },
        /AccessLogs/,
      );
      const [stage] = Object.values(template.findResources('AWS::ApiGateway::Stage')) as {
        Properties: { AccessLogSetting: { DestinationArn: unknown; Format: string } };
      }[];

      // Act
      const format = JSON.parse(stage?.Properties.AccessLogSetting.Format ?? '') as Record<string, string>;

      // Assert
      expect(stage?.Properties.AccessLogSetting.DestinationArn).toEqual({
        'Fn::GetAtt': [accessLogsId, 'Arn'],
      });
      expect(format).toMatchObject({
        apiRequestId: '$context.requestId',
        httpMethod: '$context.httpMethod',
        resourcePath: '$context.resourcePath',
        status: '$context.status',
        errorResponseType: '$context.error.responseType',
      });
      expect(Object.values(format).join(' ')).not.toMatch(/header|app-key|userAgent/i);
    });
  });

  describe('gateway responses', () => {
    const jsonHeaders = {
      'gatewayresponse.header.Content-Type': "'application/json'",
      'gatewayresponse.header.Cache-Control': "'no-store'",
      'gatewayresponse.header.X-Content-Type-Options': "'nosniff'",
    };

    it.each([
      ['MISSING_AUTHENTICATION_TOKEN', '404', 'not_found'],
      ['RESOURCE_NOT_FOUND', '404', 'not_found'],
      ['THROTTLED', '429', 'too_many_requests'],
      ['QUOTA_EXCEEDED', '429', 'too_many_requests'],
      ['REQUEST_TOO_LARGE', '413', 'payload_too_large'],
      ['UNSUPPORTED_MEDIA_TYPE', '415', 'unsupported_media_type'],
      ['ACCESS_DENIED', '403', 'forbidden'],
      ['WAF_FILTERED', '403', 'forbidden'],
      ['INTEGRATION_TIMEOUT', '504', 'gateway_timeout'],
      ['INTEGRATION_FAILURE', '502', 'bad_gateway'],
      ['DEFAULT_4XX', undefined, 'client_error'],
      ['DEFAULT_5XX', undefined, 'internal_error'],
    ])('answers %s with status %s and {"code":"%s"} as no-store JSON', (responseType, statusCode, code) => {
      // Arrange
      const responses = Object.values(
        template.findResources('AWS::ApiGateway::GatewayResponse', {
          Properties: { ResponseType: responseType },
        }),
      ) as {
        Properties: {
          StatusCode?: string;
          ResponseParameters: unknown;
          ResponseTemplates: Record<string, string>;
        };
      }[];
      expect(responses).toHaveLength(1);
      const properties = responses[0]?.Properties;

      // Act
      const body = JSON.parse(properties?.ResponseTemplates['application/json'] ?? '') as Record<
        string,
        unknown
      >;

      // Assert
      expect(properties?.StatusCode).toBe(statusCode);
      expect(properties?.ResponseParameters).toEqual(jsonHeaders);
      expect(Object.keys(properties?.ResponseTemplates ?? {})).toEqual(['application/json']);
      expect(Object.keys(body)).toEqual(['code', 'message']);
      expect(body).toEqual({
        code,
        message: Object.values(ERROR_RESPONSES).find((response) => response.code === code)?.message,
      });
      expect(body.message).toEqual(expect.stringMatching(/^[^$#]+$/));
    });
  });
});

describe("PaymentApi with the handler's and the stage's props set", () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize({
      keyCacheTtl: Duration.seconds(30),
      keyMaxStale: Duration.minutes(5),
      keyExpiryWarning: Duration.days(7),
      throttlingRateLimit: 10,
      throttlingBurstLimit: 20,
      stageName: 'v1',
      memorySize: 512,
      logLevel: 'debug',
      keyPrefix: 'acme_live',
      legacyKeys: false,
    }));
  });

  it('passes the cache settings, the log level and the key format to the handler, and the expiry warning only to the monitor', () => {
    expect(
      template.findResources('AWS::Lambda::Function')[functionLogicalId(template, 'handler')],
    ).toMatchObject({
      Properties: {
        MemorySize: 512,
        Environment: {
          Variables: {
            KEY_CACHE_TTL_SECONDS: '30',
            KEY_MAX_STALE_SECONDS: '300',
            LOG_LEVEL: 'debug',
            KEY_PREFIX: 'acme_live',
            LEGACY_KEYS: 'false',
          },
        },
      },
    });
    expect(functionEnvironment(template)).not.toHaveProperty('KEY_EXPIRY_WARNING_DAYS');
    expect(functionEnvironment(template, 'monitor')).toMatchObject({ KEY_EXPIRY_WARNING_DAYS: '7' });
  });

  it('names and throttles the stage as given', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      StageName: 'v1',
      MethodSettings: [Match.objectLike({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 })],
    });
  });
});

describe('PaymentApi with per-app rate limits', () => {
  let template: Template;
  let tableId: string;

  beforeAll(() => {
    template = sharedTemplate({ appRateLimit: { perSecond: 20 } });
    tableId = onlyLogicalId(template, 'AWS::DynamoDB::Table');
  });

  it('builds the payment Lambda from the rate-limited entry point, and from index.ts without limits', () => {
    expect(handlerEntry({ appRateLimit: { perSecond: 20 } })).toBe(
      path.join('lambda', 'payment', 'rate-limited.ts'),
    );
    expect(handlerEntry({})).toBe(path.join('lambda', 'payment', 'index.ts'));
  });

  // Rounded up and at least 1: defaultBurst's own test (test/unit/shared/keys/rate-limit.test.ts).
  it('tells the Lambda the table, the default limit (burst: one second’s worth) and to fail local, besides what it had', () => {
    expect(functionEnvironment(template)).toEqual({
      ...functionEnvironment(sharedTemplate()),
      RATE_LIMIT_TABLE: { Ref: tableId },
      RATE_LIMIT_PER_SECOND: '20',
      RATE_LIMIT_BURST: '20',
      RATE_LIMIT_FAILURE: 'local',
    });
  });

  it.each<[string, NonNullable<PaymentApiProps['appRateLimit']>]>([
    ['a fractional rate, a burst and failing closed', { perSecond: 0.5, burst: 3, failure: 'closed' }],
    ['the smallest rate', { perSecond: 0.001 }],
    ['the largest rate and burst', { perSecond: 10_000, burst: 100_000 }],
  ])('writes %s as the Lambda reads them back', (_case, appRateLimit) => {
    // Arrange
    const environment = functionEnvironment(synthesize({ appRateLimit }).template);

    // Act
    const settings = readRateLimitSettings({
      ...(environment as Record<string, string>),
      RATE_LIMIT_TABLE: 'counters',
    });

    // Assert
    expect(settings).toMatchObject({
      tableName: 'counters',
      defaultLimit: {
        perSecond: appRateLimit.perSecond,
        burst: appRateLimit.burst ?? Math.ceil(appRateLimit.perSecond),
      },
      failure: appRateLimit.failure ?? 'local',
    });
    expect(environment).not.toHaveProperty('RATE_LIMIT_DEADLINE_MS');
  });

  it('is created only once its role policy exists, and thus after the table, with no redundant dependency on the role', () => {
    const policyId = onlyLogicalId(template, 'AWS::IAM::Policy', {}, /^PaymentApiHandlerRole/);

    expect(resourceOf(template, functionLogicalId(template, 'handler')).DependsOn).toEqual([policyId]);
  });

  it('lets the handler update the counters of its one table, and nothing more than before besides', () => {
    expect(handlerStatements(template)).toEqual([
      ...handlerStatements(sharedTemplate()),
      { Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: { 'Fn::GetAtt': [tableId, 'Arn'] } },
    ]);
  });
});

describe('PaymentApi props validation', () => {
  const TTL = 'keyCacheTtl must be a whole number of seconds from 1 to 3600';
  const STALE = 'keyMaxStale must be a whole number of seconds from 0 to 86400';
  const WARNING = 'keyExpiryWarning must be a whole number of days from 1 to 365';
  const MEMORY = 'memorySize must be a whole number of MiB from 128 to 10240';
  const RATE = 'throttlingRateLimit must be a positive number of requests per second';
  const BURST = 'throttlingBurstLimit must be a whole number of requests of at least 1';
  const STAGE = 'stageName must be 1 to 128 letters, digits, "-" or "_"';

  // A Duration in fractions of its unit is requireWholeDuration's (test/infrastructure/lib/validation.test.ts).
  it.each<[string, PaymentApiProps, string]>([
    ['a zero TTL', { keyCacheTtl: Duration.seconds(0) }, `${TTL}, got 0`],
    ['a TTL over an hour', { keyCacheTtl: Duration.hours(2) }, `${TTL}, got 7200`],
    ['a staleness bound over a day', { keyMaxStale: Duration.days(2) }, `${STALE}, got 172800`],
    ['a zero-day expiry warning', { keyExpiryWarning: Duration.days(0) }, `${WARNING}, got 0`],
    ['an expiry warning over a year', { keyExpiryWarning: Duration.days(366) }, `${WARNING}, got 366`],
    ['too little memory', { memorySize: 64 }, `${MEMORY}, got 64`],
    ['too much memory', { memorySize: 10241 }, `${MEMORY}, got 10241`],
    ['a zero rate limit', { throttlingRateLimit: 0 }, `${RATE}, got 0`],
    ['a zero burst limit', { throttlingBurstLimit: 0 }, `${BURST}, got 0`],
    ['an empty stage name', { stageName: '' }, `${STAGE}, got ""`],
    ['a stage name with a space', { stageName: 'my stage' }, `${STAGE}, got "my stage"`],
    [
      'a key prefix with a hyphen',
      { keyPrefix: 'pay-k' },
      'keyPrefix must be 2 to 16 characters of a-z, 0-9 and _, got "pay-k"',
    ],
    [
      'the start of legacy keys as the key prefix',
      { keyPrefix: 'payk_live' },
      'keyPrefix must not be "payk" or start with "payk_": legacy keys (payk_...) would all be refused as malformed, got "payk_live"',
    ],
  ])('rejects %s', (_case, props, message) => {
    expect(() => {
      constructUnbundled(props);
    }).toThrow(message);
  });

  it('rejects the demo app with an existing secret, which it could only replace', () => {
    expect(() =>
      synthesize(
        { createDemoApp: true },
        {
          extra: (stack) => ({
            keysSecret: secretsmanager.Secret.fromSecretNameV2(stack, 'Existing', 'payment-api/keys'),
          }),
        },
      ),
    ).toThrow('createDemoApp cannot be used with keysSecret: the demo key is generated only in a new secret');
  });

  it('accepts the boundary values', () => {
    expect(() => {
      constructUnbundled({
        keyCacheTtl: Duration.seconds(3600),
        keyMaxStale: Duration.seconds(0),
        keyExpiryWarning: Duration.days(365),
        memorySize: 10240,
        throttlingRateLimit: 0.5,
        throttlingBurstLimit: 1,
        stageName: 'a'.repeat(128),
      });
    }).not.toThrow();
    expect(() => {
      constructUnbundled({
        keyCacheTtl: Duration.seconds(1),
        keyMaxStale: Duration.days(1),
        keyExpiryWarning: Duration.hours(24),
        memorySize: 128,
      });
    }).not.toThrow();
  });
});
