import { Duration, Stack, Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import {
  DEFAULT_KEYS_URL,
  DEFAULT_SCANNING_ACTION,
  keysUrlProblem,
  REPORT_LIMITS,
  SCANNING_ACTIONS,
  SCANNING_ENV,
  SECRET_SCANNING_ROUTE,
  type ScanningAction,
} from '../lambda/secret-scanning/settings';
import { DEFAULT_KEY_PREFIX, isKeyPrefix, KEY_PREFIX_RULE } from '../shared/keys/key-format';
import type { LogLevel } from '../shared/logger';
import { allowBatchSecretReads } from './batch-secret-reads';
import { createBundledFunction, lambdaEntry } from './bundled-function';
import type { KeyRegistry } from './key-registry';
import { requireOneOf } from './validation';

export type { ScanningAction } from '../lambda/secret-scanning/settings';
export { SCANNING_ACTIONS } from '../lambda/secret-scanning/settings';

/** The endpoint's settings PaymentApi takes as its `secretScanning` prop. */
export interface SecretScanningOptions {
  /**
   * Where GitHub's public keys for secret scanning alerts are fetched: https, or plain http to a loopback address
   * (tests only).
   * @default 'https://api.github.com/meta/public_keys/secret_scanning'
   */
  readonly keysUrl?: string;

  /**
   * What a reported key of this stack does: `revoke` ends it at once in its shard (it expires at the report's
   * instant), `report` only notifies the alarm topic and logs `key_leaked`.
   * @default 'revoke'
   */
  readonly action?: ScanningAction;
}

export const SECRET_SCANNING_DEFAULTS = {
  keysUrl: DEFAULT_KEYS_URL,
  action: DEFAULT_SCANNING_ACTION,
} as const satisfies Required<SecretScanningOptions>;

/**
 * The route's own throttle, apart from the stage's: GitHub sends a report when it finds tokens, a few a minute at
 * most, so a handful a second is plenty, and a flood of forged reports cannot spend the payment route's budget or
 * make the function read every shard more often than this.
 */
export const SECRET_SCANNING_THROTTLING = { rateLimit: 5, burstLimit: 10 } as const;

/** API Gateway waits 29 s for the function; it answers before, or GitHub retries (repeats are idempotent). */
export const SECRET_SCANNING_TIMEOUT = Duration.seconds(28);
const SECRET_SCANNING_MEMORY_MIB = 512;

/** Throws on the first invalid option, in the words the CDK app's context uses. */
export function validateSecretScanningOptions(options: SecretScanningOptions): void {
  // The URL is not repeated: a mistyped one may carry something that does not belong in a build log.
  const problem =
    options.keysUrl === undefined || Token.isUnresolved(options.keysUrl)
      ? undefined
      : keysUrlProblem(options.keysUrl);
  if (problem !== undefined) throw new Error(`secretScanning.keysUrl ${problem}`);
  if (options.action !== undefined) requireOneOf('secretScanning.action', SCANNING_ACTIONS, options.action);
}

export interface SecretScanningProps extends SecretScanningOptions {
  /** The API that gets `POST /secret-scanning`. */
  readonly api: apigateway.RestApi;
  /** The shards the function searches and writes. */
  readonly registry: KeyRegistry;
  /**
   * The stack's key prefix: only tokens of this stack's format (`<prefix>_` + 32 base62 + a checksum) are looked up.
   * @default DEFAULT_KEY_PREFIX
   */
  readonly keyPrefix?: string;
  /**
   * Where a notice of each report's leaked keys goes (app ids, key ids, URLs; never a key).
   * @default - no notice: the log lines `key_leaked` alone record a leak
   */
  readonly alarmTopic?: sns.ITopic;
  readonly logRetention: logs.RetentionDays;
  readonly logLevel: LogLevel;
}

/**
 * GitHub's secret scanning partner program, opt-in: `POST /secret-scanning` on the API, answered by a function of its
 * own (lambda/secret-scanning) that verifies GitHub's signature, looks each reported token of this stack's format up
 * in every shard by digest, ends the ones found (or only reports them), and tells the alarm topic. The route asks for
 * no App-key: GitHub's ECDSA signature is its authentication. Its role may read and write the key shards, publish to
 * the alarm topic and write its own log group, nothing else.
 */
export class SecretScanning extends Construct {
  public readonly handler: NodejsFunction;
  /** The `/secret-scanning` resource. */
  public readonly resource: apigateway.Resource;
  public readonly method: apigateway.Method;
  /** The full execute-api URL to register with GitHub, stage included. */
  public readonly url: string;

  constructor(scope: Construct, id: string, props: SecretScanningProps) {
    super(scope, id);
    validateSecretScanningOptions(props);
    const keyPrefix = props.keyPrefix ?? DEFAULT_KEY_PREFIX;
    if (!isKeyPrefix(keyPrefix)) throw new Error(`keyPrefix must be ${KEY_PREFIX_RULE}, got "${keyPrefix}"`);

    this.handler = createBundledFunction(this, 'Function', {
      entry: lambdaEntry('secret-scanning', 'index.ts'),
      description:
        "payment-api: GitHub secret scanning partner endpoint, verifies GitHub's signature and ends leaked keys",
      roleDescription:
        'payment-api secret scanning: writes its own log group, reads and writes the key shards, notifies the alarm topic',
      memorySize: SECRET_SCANNING_MEMORY_MIB,
      timeout: SECRET_SCANNING_TIMEOUT,
      logRetention: props.logRetention,
      environment: {
        ...props.registry.environment,
        [SCANNING_ENV.keysUrl]: props.keysUrl ?? SECRET_SCANNING_DEFAULTS.keysUrl,
        [SCANNING_ENV.action]: props.action ?? SECRET_SCANNING_DEFAULTS.action,
        [SCANNING_ENV.keyPrefix]: keyPrefix,
        [SCANNING_ENV.logLevel]: props.logLevel,
        ...(props.alarmTopic === undefined
          ? {}
          : { [SCANNING_ENV.alarmTopicArn]: props.alarmTopic.topicArn }),
      },
    });
    props.registry.grantReadWrite(this.handler);
    allowBatchSecretReads(this.handler, 'secret scanning');
    if (props.alarmTopic) this.allowNotices(props.alarmTopic);

    this.resource = props.api.root.addResource(SECRET_SCANNING_ROUTE.path.slice(1));
    this.method = this.addReportMethod(props.api);
    this.url = props.api.urlForPath(this.resource.path);
  }

  /**
   * POST with a body API Gateway checks against the report's shape (a list of at most REPORT_LIMITS.maxTokens
   * entries, each a token and its type within their lengths) before the function runs; the function checks the
   * signature and everything else, and answers 401 for a missing or wrong signature.
   */
  private addReportMethod(api: apigateway.RestApi): apigateway.Method {
    const text = (maxLength: number): apigateway.JsonSchema => ({
      type: apigateway.JsonSchemaType.STRING,
      maxLength,
    });
    const model = api.addModel('SecretScanningReport', {
      contentType: 'application/json',
      description: 'A GitHub secret scanning alert: the tokens found, each with its type, URL and source',
      schema: {
        schema: apigateway.JsonSchemaVersion.DRAFT4,
        title: 'SecretScanningReport',
        type: apigateway.JsonSchemaType.ARRAY,
        maxItems: REPORT_LIMITS.maxTokens,
        items: {
          type: apigateway.JsonSchemaType.OBJECT,
          required: ['token', 'type'],
          properties: {
            token: { ...text(REPORT_LIMITS.maxTokenLength), minLength: 1 },
            type: text(REPORT_LIMITS.maxTypeLength),
            url: text(REPORT_LIMITS.maxUrlLength),
            source: text(REPORT_LIMITS.maxSourceLength),
          },
        },
      },
    });
    const validator = api.addRequestValidator('SecretScanningReportValidator', {
      validateRequestBody: true,
      validateRequestParameters: false,
    });
    const method = this.resource.addMethod(
      SECRET_SCANNING_ROUTE.method,
      new apigateway.LambdaIntegration(this.handler, { proxy: true, allowTestInvoke: false }),
      {
        authorizationType: apigateway.AuthorizationType.NONE,
        requestValidator: validator,
        requestModels: { 'application/json': model },
      },
    );
    NagSuppressions.addResourceSuppressions(method, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          "GitHub's secret scanning partner program authenticates each report with an ECDSA signature over its body, " +
          'which the function verifies against the public keys GitHub publishes; it cannot send an authorizer token.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason: 'The caller is GitHub, authenticated by its ECDSA signature, not a Cognito user.',
      },
    ]);
    return method;
  }

  /**
   * sns:Publish on the topic, and, when the topic is encrypted with a key the stack knows, the two calls SNS makes on
   * the publisher's behalf, through SNS only: named actions, where the topic's own grantPublish adds
   * `kms:GenerateDataKey*`.
   */
  private allowNotices(topic: sns.ITopic): void {
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({ actions: ['sns:Publish'], resources: [topic.topicArn] }),
    );
    const key = topic.masterKey;
    if (key === undefined) return;
    this.handler.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['kms:Decrypt', 'kms:GenerateDataKey'],
        resources: [key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `sns.${Stack.of(this).region}.amazonaws.com` } },
      }),
    );
  }
}
