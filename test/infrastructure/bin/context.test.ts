import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  CONTEXT_SETTINGS,
  ContextError,
  isCdkContextKey,
  nearestKey,
  readContext,
  type AppConfig,
} from '../../../bin/context';
import { createApp } from '../../../bin/payment-api';
import type { PaymentApiProps } from '../../../lib/payment-api';
import { constructUnbundled } from '../../support/construct-template';
import { contextProblems } from './app';

/** Where the configuration table lives, kept in step with CONTEXT_SETTINGS. */
const CONFIGURATION_PAGE = path.join(__dirname, '..', '..', '..', 'docs', 'configuration.md');

const KMS_KEY_ARN = 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab';
const WEB_ACL_ARN =
  'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared-acl/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';
const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';
const DOMAIN = {
  domainName: 'payments.example.com',
  certificateArn: CERTIFICATE_ARN,
};

/** Durations compared by their value, the rest as they are. */
function comparable({ stackName, env, props, pipelineAccess }: AppConfig): Record<string, unknown> {
  return {
    stackName,
    env,
    pipelineAccess,
    ...props,
    keyCacheTtl: props.keyCacheTtl?.toSeconds(),
    keyMaxStale: props.keyMaxStale?.toSeconds(),
    keyExpiryWarning: props.keyExpiryWarning?.toDays(),
    rotation: props.rotation && { everyDays: props.rotation.every.toDays(), keep: props.rotation.keep },
    monitoring: props.monitoring && {
      ...props.monitoring,
      latencyAlarmThreshold: props.monitoring.latencyAlarmThreshold?.toMilliseconds(),
    },
  };
}

/** The problems readContext reports, one line each; [] when it accepts the context. */
function problemsWith(context: Record<string, unknown>): readonly string[] {
  return contextProblems(() => readContext(context));
}

describe('readContext', () => {
  it('reads every key from `-c key=value` strings', () => {
    // Arrange
    const context = {
      env: 'staging',
      existingSecret: 'payment-api/keys',
      createDemoApp: 'false',
      secretKmsKeyArn: KMS_KEY_ARN,
      keyCacheTtlSeconds: '30',
      keyMaxStaleSeconds: '600',
      keyExpiryWarningDays: '30',
      keyShards: '8',
      keyShardsPrevious: '4',
      keyPrefix: 'acme_stg',
      legacyKeys: 'false',
      throttlingRateLimit: '12.5',
      throttlingBurstLimit: '25',
      appRateLimit: '2.5',
      appRateBurst: '5',
      appRateLimitFailure: 'closed',
      stageName: 'v1',
      logRetentionDays: '90',
      memorySize: '512',
      logLevel: 'debug',
      rotationDays: '30',
      rotationKeep: '3',
      wafRateLimit: '1000',
      ...DOMAIN,
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      hostedZoneName: 'example.com',
      disableExecuteApiEndpoint: 'true',
      metricsNamespace: 'Payments/Staging',
      alarmEmail: 'oncall@example.com',
      unauthorizedAlarmThreshold: '50',
      latencyAlarmThresholdMs: '800',
      serverErrorRateAlarmThreshold: '2.5',
      tracing: 'true',
      secretScanning: 'true',
      secretScanningKeysUrl: 'https://keys.example.com/github/secret_scanning',
      secretScanningAction: 'report',
      githubRepository: 'octo-org/payment-api',
      githubRepositoryIds: '123456/456789',
      githubOidcProviderArn: 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com',
      pipelineStages: 'beta,gamma,prod',
      pipelineRegions: 'eu-west-1,us-east-1',
    };

    // Act
    const config = readContext(context);

    // Assert
    expect(comparable(config)).toEqual({
      stackName: 'PaymentApi-staging',
      env: 'staging',
      pipelineAccess: {
        githubRepository: 'octo-org/payment-api',
        repositoryIds: { ownerId: '123456', repositoryId: '456789' },
        existingOidcProviderArn:
          'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com',
        stages: ['beta', 'gamma', 'prod'],
        regions: ['eu-west-1', 'us-east-1'],
      },
      environmentName: 'staging',
      existingSecret: 'payment-api/keys',
      createDemoApp: false,
      secretKmsKeyArn: KMS_KEY_ARN,
      keyCacheTtl: 30,
      keyMaxStale: 600,
      keyExpiryWarning: 30,
      keyShards: 8,
      keyShardsPrevious: 4,
      keyPrefix: 'acme_stg',
      legacyKeys: false,
      throttlingRateLimit: 12.5,
      throttlingBurstLimit: 25,
      appRateLimit: { perSecond: 2.5, burst: 5, failure: 'closed' },
      stageName: 'v1',
      logRetention: RetentionDays.THREE_MONTHS,
      memorySize: 512,
      logLevel: 'debug',
      rotation: { everyDays: 30, keep: 3 },
      waf: { rateLimit: 1000 },
      domainName: 'payments.example.com',
      certificateArn: CERTIFICATE_ARN,
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      hostedZoneName: 'example.com',
      disableExecuteApiEndpoint: true,
      monitoring: {
        metricsNamespace: 'Payments/Staging',
        alarmEmail: 'oncall@example.com',
        unauthorizedAlarmThreshold: 50,
        latencyAlarmThreshold: 800,
        serverErrorRateAlarmThreshold: 2.5,
      },
      tracing: true,
      secretScanning: { keysUrl: 'https://keys.example.com/github/secret_scanning', action: 'report' },
    });
    // webAclArn, alarmTopicArn and envs exclude wafRateLimit, alarmEmail and env: their own tests read them.
    expect([...Object.keys(context), 'webAclArn', 'alarmTopicArn', 'envs'].sort()).toEqual(
      CONTEXT_SETTINGS.map((row) => row.key).sort(),
    );
  });

  it('leaves absent, null and empty keys to the defaults, and the stack named PaymentApi', () => {
    expect(readContext({ existingSecret: '', stageName: null, env: '' })).toEqual({
      stackName: 'PaymentApi',
      props: {},
    });
  });

  it('names the stack after the environment, so environments deploy side by side', () => {
    expect(readContext({ env: 'production' }).stackName).toBe('PaymentApi-production');
    expect(readContext({ env: 'a'.repeat(24) }).stackName).toBe(`PaymentApi-${'a'.repeat(24)}`);
  });

  it.each<[string, Record<string, unknown>, AppConfig['props']]>([
    [
      'tells the stack its environment, whose new secret then starts without the demo app',
      { env: 'production' },
      { environmentName: 'production' },
    ],
    [
      'keeps the demo app of an environment when createDemoApp is set',
      { env: 'production', createDemoApp: 'true' },
      { environmentName: 'production', createDemoApp: true },
    ],
    [
      'sends alarm notices to an existing topic with alarmTopicArn alone',
      { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall' },
      { monitoring: { alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall' } },
    ],
    [
      'reads a shrink back to one shard: keyShardsPrevious alone, keyShards left to its default',
      { keyShardsPrevious: '4' },
      { keyShardsPrevious: 4 },
    ],
    [
      'turns per-app rate limits on with appRateLimit alone, leaving the burst and the failure mode to their defaults',
      { appRateLimit: '20', appRateBurst: '', appRateLimitFailure: null },
      { appRateLimit: { perSecond: 20 } },
    ],
    [
      'associates an existing web ACL with webAclArn alone',
      { webAclArn: WEB_ACL_ARN },
      { webAclArn: WEB_ACL_ARN },
    ],
    [
      'accepts disableExecuteApiEndpoint=false without a custom domain: a switch that is off needs nothing',
      { disableExecuteApiEndpoint: 'false' },
      { disableExecuteApiEndpoint: false },
    ],
    [
      'accepts a hosted zone for the domain itself',
      { ...DOMAIN, hostedZoneId: 'Z1', hostedZoneName: 'payments.example.com' },
      { ...DOMAIN, hostedZoneId: 'Z1', hostedZoneName: 'payments.example.com' },
    ],
    ['leaves the secret scanning endpoint off with secretScanning=false', { secretScanning: 'false' }, {}],
    [
      "turns the secret scanning endpoint on with GitHub's keys and revocation by default",
      { secretScanning: 'true' },
      { secretScanning: {} },
    ],
    [
      'takes a loopback secret scanning keys URL over plain http, for tests',
      { secretScanning: true, secretScanningKeysUrl: 'http://127.0.0.1:8443/keys' },
      { secretScanning: { keysUrl: 'http://127.0.0.1:8443/keys' } },
    ],
  ])('%s', (_case, context, props) => {
    expect(readContext(context).props).toEqual(props);
  });

  it('turns scheduled rotation on with rotationDays alone, leaving keep to its default', () => {
    const config = readContext({ rotationDays: '90', rotationKeep: '' });

    expect(comparable(config).rotation).toEqual({ everyDays: 90, keep: undefined });
  });

  // The words of the keys that have several rows below; each row adds ", got <the value as given>".
  const ROTATION_DAYS = 'context "rotationDays" must be a whole number of days from 1 to 1000';
  const ENV =
    'context "env" must be 1 to 24 letters, digits or hyphens, starting with a letter and not ending with a hyphen';
  const HOSTED_ZONE_NAME = 'context "hostedZoneName" must be "payments.example.com" or a parent domain of it';

  // A value the construct refuses too gets the construct's words: "a bad value" below proves those, and the
  // construct's own tests their text. What a parser refuses (a word, a unit, a fraction, "yes" for a boolean) is
  // test/infrastructure/bin/context-values.test.ts's. The rows here are the keys and values neither has; an unknown
  // logLevel and rotationKeep without rotationDays are 'reports every problem, one line each ...' below.
  it.each<[string, Record<string, unknown>, string]>([
    [
      'the start of legacy keys as the key prefix',
      { keyPrefix: 'payk' },
      'context "keyPrefix" must not be "payk" or start with "payk_": legacy keys (payk_...) would all be refused as malformed, got "payk"',
    ],
    [
      'a previous shard count of 1 without keyShards, whose default is 1',
      { keyShardsPrevious: '1' },
      'context "keyShardsPrevious" must differ from keyShards (1): set it only while a reshard is under way, to the count apps were placed by before, got 1',
    ],
    [
      'a retention CloudWatch Logs does not offer',
      { logRetentionDays: '2' },
      'context "logRetentionDays" must be one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653, 9999 (days), got "2"',
    ],
    [
      'a secret name with a space',
      { existingSecret: 'payment keys' },
      'context "existingSecret" must be a secret name (1 to 512 letters, digits or /_+=.@-) or a secret ARN, got "payment keys"',
    ],
    [
      'an ARN of another service as the secret',
      { existingSecret: 'arn:aws:s3:::my-bucket' },
      'context "existingSecret" must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>), got "arn:aws:s3:::my-bucket"',
    ],
    [
      'a KMS alias instead of a key ARN',
      { secretKmsKeyArn: 'alias/payment-api' },
      'context "secretKmsKeyArn" must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), got "alias/payment-api"',
    ],
    ['a rotation period of zero days', { rotationDays: '0' }, `${ROTATION_DAYS}, got "0"`],
    ['a rotation period over 1000 days', { rotationDays: 1001 }, `${ROTATION_DAYS}, got 1001`],
    ['an environment name with an underscore', { env: 'staging_eu' }, `${ENV}, got "staging_eu"`],
    ['an environment name starting with a digit', { env: '2024' }, `${ENV}, got "2024"`],
    ['an environment name of 25 characters', { env: 'a'.repeat(25) }, `${ENV}, got "${'a'.repeat(25)}"`],
    [
      'a wildcard domain name',
      { ...DOMAIN, domainName: '*.example.com' },
      'context "domainName" must be a lower-case domain name such as payments.example.com, got "*.example.com"',
    ],
    [
      'a certificate ARN of another service',
      { ...DOMAIN, certificateArn: KMS_KEY_ARN },
      `context "certificateArn" must be an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>), got "${KMS_KEY_ARN}"`,
    ],
    [
      'a hosted zone id in lower case',
      { ...DOMAIN, hostedZoneId: 'z0123', hostedZoneName: 'example.com' },
      'context "hostedZoneId" must be a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ, got "z0123"',
    ],
    [
      'a hosted zone that cannot hold the domain',
      { ...DOMAIN, hostedZoneId: 'Z1', hostedZoneName: 'example.org' },
      `${HOSTED_ZONE_NAME}, got "example.org"`,
    ],
    [
      'a hosted zone that only ends like the domain',
      { ...DOMAIN, hostedZoneId: 'Z1', hostedZoneName: 'ample.com' },
      `${HOSTED_ZONE_NAME}, got "ample.com"`,
    ],
    // Companions: a key without the key it needs, or with one it excludes, names both.
    [
      'a per-app burst without a per-app rate',
      { appRateBurst: '40' },
      'context "appRateBurst" needs "appRateLimit": without it there are no per-app limits',
    ],
    [
      'a failure mode of the limiter without a per-app rate',
      { appRateLimitFailure: 'closed' },
      'context "appRateLimitFailure" needs "appRateLimit": without it there are no per-app limits',
    ],
    [
      'a new web ACL and an existing one',
      { wafRateLimit: '1000', webAclArn: WEB_ACL_ARN },
      'context "webAclArn" cannot be used with "wafRateLimit": the stage takes one web ACL, a new one or yours',
    ],
    [
      'a domain without its certificate',
      { domainName: 'payments.example.com' },
      'context "domainName" needs "certificateArn": API Gateway serves a custom domain only with its certificate',
    ],
    [
      'a certificate without a domain',
      { certificateArn: CERTIFICATE_ARN },
      'context "certificateArn" needs "domainName": the certificate is for the custom domain',
    ],
    [
      'a hosted zone id without its name',
      { ...DOMAIN, hostedZoneId: 'Z1' },
      'context "hostedZoneId" needs "hostedZoneName": the alias record for the custom domain goes in the zone named by both',
    ],
    [
      'the demo app with an existing secret',
      { existingSecret: 'payment-api/keys', createDemoApp: 'true' },
      'context "createDemoApp" cannot be used with "existingSecret": the demo key is generated only in a new secret',
    ],
    [
      'the default endpoint closed without a custom domain',
      { disableExecuteApiEndpoint: 'true' },
      'context "disableExecuteApiEndpoint" needs "domainName": with the default endpoint closed, the custom domain is the only way in',
    ],
    [
      'a hosted zone name without an id or a domain, as two missing keys on one line',
      { hostedZoneName: 'example.com' },
      'context "hostedZoneName" needs "hostedZoneId" and "domainName": the alias record for the custom domain goes in the zone named by both',
    ],
    // The secret scanning endpoint: its keys URL must be https and needs the endpoint.
    [
      'a keys URL over plain http to another host',
      {
        secretScanning: 'true',
        secretScanningKeysUrl: 'http://api.github.com/meta/public_keys/secret_scanning',
      },
      'context "secretScanningKeysUrl" must use https (plain http only to a loopback address, for tests)',
    ],
    [
      'a keys URL that is not one, without repeating it',
      { secretScanning: 'true', secretScanningKeysUrl: 'pay_secret-looking-text' },
      'context "secretScanningKeysUrl" must be an absolute URL',
    ],
    [
      'an action of another name',
      { secretScanning: 'true', secretScanningAction: 'delete' },
      'context "secretScanningAction" must be one of revoke, report, got "delete"',
    ],
    [
      'a keys URL without the endpoint',
      { secretScanningKeysUrl: 'https://keys.example.com/k' },
      'context "secretScanningKeysUrl" needs "secretScanning": without it there is no secret scanning endpoint',
    ],
  ])('rejects %s in one line naming the key', (_case, context, problem) => {
    expect(problemsWith(context)).toEqual([problem]);
  });

  it('reports every problem, one line each: unknown keys first, then values and companions in table order', () => {
    // Act
    const problems = problemsWith({
      memorysize: '512',
      keyCacheTtlSeconds: 'soon',
      rotationKeep: '3',
      logLevel: 'loud',
    });

    // Assert
    expect(problems).toEqual([
      'context "memorysize" is not a setting of this app; did you mean "memorySize"?',
      'context "keyCacheTtlSeconds" must be a whole number of seconds from 1 to 3600, got "soon"',
      'context "logLevel" must be one of debug, info, warn, error, got "loud"',
      'context "rotationKeep" needs "rotationDays": without it there is no scheduled rotation',
    ]);
  });
});

describe('unknown context keys', () => {
  it.each([
    ['keyCacheTTL', 'keyCacheTtlSeconds'],
    ['keyCacheTtl', 'keyCacheTtlSeconds'],
    ['cacheTtlSeconds', 'keyCacheTtlSeconds'],
    ['keyExpiryWarning', 'keyExpiryWarningDays'],
    ['expiryWarningDays', 'keyExpiryWarningDays'],
    ['LOGLEVEL', 'logLevel'],
    ['memory', 'memorySize'],
    ['rotationday', 'rotationDays'],
    ['wafRatelimit', 'wafRateLimit'],
    ['hostedZone', 'hostedZoneId'],
    ['certificate', 'certificateArn'],
    ['environment', 'env'],
    ['domain', 'domainName'],
    ['githubRepo', 'githubRepository'],
  ])('answers %j with the nearest known key, %j', (typed, suggestion) => {
    expect(nearestKey(typed)).toBe(suggestion);
    expect(problemsWith({ [typed]: '30' })).toEqual([
      `context "${typed}" is not a setting of this app; did you mean "${suggestion}"?`,
    ]);
  });

  it.each([
    // What the CDK CLI 2.1148 puts in the context of every synth, besides cdk.json's.
    'aws:cdk:enable-path-metadata',
    'aws:cdk:enable-asset-metadata',
    'aws:cdk:version-reporting',
    'aws:cdk:bundling-stacks',
    // Feature flags, today's and the older forms.
    '@aws-cdk/core:failSynthOnValidationErrors',
    '@aws-cdk/aws-lambda:recognizeLayerVersion',
    '@aws-cdk-containers/ecs-service-extensions:enableDefaultLogDriver',
    'aws-cdk:enableDiffNoFail',
    // Lookups cached in cdk.context.json, and what `cdk acknowledge` and `cdk cli-telemetry` store.
    'availability-zones:account=123456789012:region=eu-west-1',
    'hosted-zone:account=123456789012:domainName=example.com:region=eu-west-1',
    'acknowledged-issue-numbers',
    'cli-telemetry',
  ])('accepts %j, a key of the CDK itself', (key) => {
    expect(isCdkContextKey(key)).toBe(true);
    expect(problemsWith({ [key]: 'x' })).toEqual([]);
  });

  it.each(['aws', 'keyCacheTtlSeconds:', 'aws-cdk', 'myFlag', 'cli_telemetry'])(
    'does not take %j for a key of the CDK',
    (key) => {
      expect(isCdkContextKey(key)).toBe(false);
    },
  );

  it("accepts every key of this project's cdk.json", () => {
    const cdkJson = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'cdk.json'), 'utf8')) as {
      context: Record<string, unknown>;
    };

    expect(problemsWith(cdkJson.context)).toEqual([]);
  });
});

describe('createApp', () => {
  it('adds no stack and throws every context problem when the context has any', () => {
    // Arrange
    const app = new App({ context: { keyCacheTTL: '30', stageName: 'my stage' } });

    // Act
    const attempt = (): App => createApp(app);

    // Assert
    expect(attempt).toThrow(ContextError);
    expect(attempt).toThrow(
      'context "keyCacheTTL" is not a setting of this app; did you mean "keyCacheTtlSeconds"?\n' +
        'context "stageName" must be 1 to 128 letters, digits, "-" or "_", got "my stage"',
    );
    expect(app.node.children).toHaveLength(0);
  });
});

describe('the table of context keys', () => {
  // Each key once: 'reads every key from -c key=value strings' compares the keys with a context's, sorted.
  it('gives each key what it sets, its default and its meaning', () => {
    for (const row of CONTEXT_SETTINGS) {
      expect({
        key: row.key,
        hasSets: row.sets !== '',
        hasDefault: row.defaultValue !== '',
        hasMeaning: row.meaning.length > 10,
      }).toEqual({ key: row.key, hasSets: true, hasDefault: true, hasMeaning: true });
    }
  });

  it('relates keys only to keys it lists', () => {
    const keys = new Set(CONTEXT_SETTINGS.map((row) => row.key));
    const related = CONTEXT_SETTINGS.flatMap((row) => [
      ...(row.needs?.keys ?? []),
      ...(row.excludes?.keys ?? []),
    ]);

    expect(related.filter((key) => !keys.has(key))).toEqual([]);
  });

  it("is mirrored by docs/configuration.md's table: the same keys, in the same order", () => {
    // Arrange: the table is the one whose header has a "Context key" column.
    const lines = readFileSync(CONFIGURATION_PAGE, 'utf8').split('\n');
    const header = lines.findIndex((line) => line.startsWith('|') && line.includes('Context key'));
    const column = (lines[header] ?? '').split('|').findIndex((cell) => cell.trim() === 'Context key');
    const end = lines.findIndex((line, index) => index > header && !line.startsWith('|'));
    const rows = lines.slice(header + 2, end === -1 ? undefined : end);

    // Act
    const documented = rows.map((line) => /`([^`]+)`/.exec(line.split('|')[column] ?? '')?.[1]);

    // Assert
    expect(header).toBeGreaterThanOrEqual(0);
    expect(documented).toEqual(CONTEXT_SETTINGS.map((row) => row.key));
  });
});

/** The message of what `build` throws. */
function errorOf(build: () => void): string {
  try {
    build();
  } catch (error) {
    if (error instanceof Error) return error.message;
  }
  return 'no error';
}

/** The construct's props that set `prop`, a path such as monitoring.alarmEmail, to `value`. */
function propsSetting(prop: string, value: unknown): PaymentApiProps {
  return prop.split('.').reduceRight<unknown>((inner, name) => ({ [name]: inner }), value) as PaymentApiProps;
}

describe('a bad value', () => {
  // The props are the value at the prop's path, unless given (a rest parameter: jest would take a fourth for done):
  // a Duration where the context counts in a unit.
  it.each<[string, unknown, string, PaymentApiProps?]>([
    ['keyCacheTtlSeconds', 0, 'keyCacheTtl', { keyCacheTtl: Duration.seconds(0) }],
    ['keyMaxStaleSeconds', 86_401, 'keyMaxStale', { keyMaxStale: Duration.seconds(86_401) }],
    ['keyExpiryWarningDays', 0, 'keyExpiryWarning', { keyExpiryWarning: Duration.days(0) }],
    ['keyShards', 0, 'keyShards'],
    ['keyShards', 1025, 'keyShards'],
    ['keyShardsPrevious', 0.5, 'keyShardsPrevious'],
    ['throttlingRateLimit', 0, 'throttlingRateLimit'],
    ['throttlingBurstLimit', 0, 'throttlingBurstLimit'],
    ['appRateLimit', 0, 'appRateLimit.perSecond'],
    ['appRateLimit', 0.0001, 'appRateLimit.perSecond'],
    ['keyPrefix', 'PAY', 'keyPrefix'],
    ['stageName', 'my stage', 'stageName'],
    ['memorySize', 64, 'memorySize'],
    ['wafRateLimit', 9, 'waf.rateLimit'],
    ['webAclArn', 'arn:aws:wafv2:x', 'webAclArn'],
    ['metricsNamespace', 'AWS/Payments', 'monitoring.metricsNamespace'],
    ['alarmEmail', 'oncall', 'monitoring.alarmEmail'],
    ['unauthorizedAlarmThreshold', 0, 'monitoring.unauthorizedAlarmThreshold'],
    [
      'latencyAlarmThresholdMs',
      30_000,
      'monitoring.latencyAlarmThreshold',
      { monitoring: { latencyAlarmThreshold: Duration.millis(30_000) } },
    ],
    ['serverErrorRateAlarmThreshold', 100, 'monitoring.serverErrorRateAlarmThreshold'],
  ])('of context "%s" (%j) gets the words the construct uses for %s', (key, value, prop, ...given) => {
    // Act
    const [problem] = problemsWith({ [key]: value });
    const constructError = errorOf(() => {
      constructUnbundled(given[0] ?? propsSetting(prop, value));
    });

    // Assert
    expect(constructError.startsWith(`${prop} must be `)).toBe(true);
    expect(problem).toBe(`context "${key}" ${constructError.slice(prop.length + 1)}`);
  });

  // Values checked only beside another key: the construct's message for keyShardsPrevious equal to keyShards is
  // proved word for word in test/infrastructure/lib/key-registry.test.ts.
  it.each<[string, string, Record<string, unknown>, PaymentApiProps]>([
    [
      'appRateBurst',
      'appRateLimit.burst',
      { appRateLimit: 1, appRateBurst: 0 },
      { appRateLimit: { perSecond: 1, burst: 0 } },
    ],
    [
      'appRateLimitFailure',
      'appRateLimit.failure',
      { appRateLimit: 1, appRateLimitFailure: 'ajar' },
      { appRateLimit: { perSecond: 1, failure: 'ajar' as 'open' } },
    ],
    [
      'keyShardsPrevious',
      'keyShardsPrevious',
      { keyShards: 4, keyShardsPrevious: 4 },
      { keyShards: 4, keyShardsPrevious: 4 },
    ],
    [
      'rotationKeep',
      'rotation.keep',
      { rotationDays: 30, rotationKeep: 1 },
      { rotation: { every: Duration.days(30), keep: 1 } },
    ],
  ])(
    'of context "%s" beside its companion gets the words the construct uses for %s',
    (key, prop, context, props) => {
      const [problem] = problemsWith(context);
      const constructError = errorOf(() => {
        constructUnbundled(props);
      });

      expect(constructError.startsWith(`${prop} must `)).toBe(true);
      expect(problem).toBe(`context "${key}" ${constructError.slice(prop.length + 1)}`);
    },
  );
});
