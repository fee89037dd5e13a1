import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import { DEMO_APP_ID } from '../shared/keys/app-id';
import { METRICS_ENV } from '../lambda/payment/metric-names';
import {
  COMMON_HEADERS,
  ERROR_RESPONSES,
  errorBody,
  METHOD_NOT_ALLOWED_HEADERS,
  type ErrorName,
} from '../lambda/payment/responses';
import { PAYMENT_ROUTE } from '../lambda/payment/route';
import {
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_MAX_STALE_SECONDS,
  ENV,
  KEY_CACHE_LIMITS,
} from '../lambda/payment/settings';
import type { LogLevel } from '../shared/logger';
import { createBundledFunction, lambdaEntry } from './bundled-function';
import { CustomDomain, type CustomDomainOptions } from './domain';
import { Firewall, type WafOptions } from './firewall';
import { grantKeyUseThroughSecretsManager } from './grants';
import { KeyRotation, validateKeyRotationOptions, type KeyRotationOptions } from './key-rotation';
import {
  MONITORING_DEFAULTS,
  PaymentApiMonitoring,
  pickMonitoringOptions,
  validateMonitoringOptions,
  type PaymentApiMonitoringOptions,
} from './monitoring';
import { requireFormat, type TextFormat } from './text-format';

export type { LogLevel } from '../shared/logger';
export type { CustomDomainOptions } from './domain';
export type { WafOptions } from './firewall';
export type { KeyRotationOptions } from './key-rotation';
export type { PaymentApiMonitoringOptions } from './monitoring';

/** The defaults of {@link PaymentApiProps}, in one place for the stack, the CDK app and the README. */
export const PAYMENT_API_DEFAULTS = {
  keyCacheTtl: Duration.seconds(DEFAULT_CACHE_TTL_SECONDS),
  keyMaxStale: Duration.seconds(DEFAULT_MAX_STALE_SECONDS),
  throttlingRateLimit: 50,
  throttlingBurstLimit: 100,
  stageName: 'prod',
  logRetention: logs.RetentionDays.ONE_MONTH,
  memorySize: 256,
  logLevel: 'info',
} as const satisfies Partial<Record<keyof PaymentApiProps, unknown>>;

/** Bounds checked by the constructor. */
export const PAYMENT_API_LIMITS = {
  keyCacheTtlSeconds: KEY_CACHE_LIMITS.ttlSeconds,
  keyMaxStaleSeconds: KEY_CACHE_LIMITS.maxStaleSeconds,
  memorySize: { min: 128, max: 10_240 },
} as const;

/** Payment path served by the API. */

/** The handler's hard limit. A Secrets Manager fetch is capped at 1.5 s (lambda/payment/secrets-manager-source.ts). */
const HANDLER_TIMEOUT = Duration.seconds(10);

export const STAGE_NAME: TextFormat = {
  pattern: /^[A-Za-z0-9_-]{1,128}$/,
  description: '1 to 128 letters, digits, "-" or "_"',
};

/** Monitoring options (namespace, alarm thresholds, alarm topic) are documented in lib/monitoring.ts. */
export interface PaymentApiProps extends PaymentApiMonitoringOptions {
  /**
   * The secret that holds the keys: a JSON object mapping each App-id to a key or a list of keys.
   * @default - a new secret, retained when the stack is deleted, holding one generated key for app `demo`
   */
  readonly keysSecret?: secretsmanager.ISecret;

  /**
   * The customer managed KMS key that encrypts the secret. The handler is allowed `kms:Decrypt` on it, through
   * Secrets Manager only. A new secret is encrypted with it.
   * @default - the secret uses the AWS managed key `aws/secretsmanager`, and no KMS permission is granted
   */
  readonly secretEncryptionKey?: kms.IKey;

  /**
   * How long the Lambda keeps the keys before it asks Secrets Manager again: a change to the secret takes
   * effect within this time. Whole seconds, 1 to 3600.
   * @default Duration.seconds(60)
   */
  readonly keyCacheTtl?: Duration;

  /**
   * How long past the TTL the last good keys are still served while Secrets Manager cannot be read; after
   * that the API answers 503. Whole seconds, 0 to 86400.
   * @default Duration.minutes(15)
   */
  readonly keyMaxStale?: Duration;

  /**
   * Steady-state requests per second allowed on the stage, across all callers.
   * @default 50
   */
  readonly throttlingRateLimit?: number;

  /**
   * Requests the stage accepts in a burst above the steady rate, across all callers.
   * @default 100
   */
  readonly throttlingBurstLimit?: number;

  /**
   * API Gateway stage, the first path segment of the URL. 1 to 128 letters, digits, "-" or "_".
   * @default 'prod'
   */
  readonly stageName?: string;

  /**
   * Retention of the Lambda's log group and of the API access log group.
   * @default logs.RetentionDays.ONE_MONTH
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * Lambda memory in MiB, 128 to 10240. CPU is allocated in proportion.
   * @default 256
   */
  readonly memorySize?: number;

  /**
   * Lowest level the handler (and the rotation function) logs.
   * @default 'info'
   */
  readonly logLevel?: LogLevel;

  /**
   * Secrets Manager's scheduled rotation of the keys secret: a rotation Lambda adds a fresh key to every app
   * every `every`, and keeps the `keep` newest keys of each. Suits clients that read their own key from the
   * secret; apps whose keys are stored as `sha256:` digests are left alone.
   * @default - no scheduled rotation
   */
  readonly rotation?: KeyRotationOptions;

  /**
   * X-Ray tracing of the stage and the Lambda: a trace per request with API Gateway's and the function's
   * segments (the AWS SDK calls inside are not instrumented).
   * @default false
   */
  readonly tracing?: boolean;

  /**
   * A new regional WAFv2 web ACL in front of the stage: a rate limit per source IP, then the AWS managed rule
   * groups for known bad inputs and common threats. Blocked requests get 403 `{"code":"forbidden",...}`.
   * Not with `webAclArn`.
   * @default - no web ACL
   */
  readonly waf?: WafOptions;

  /**
   * An existing regional WAFv2 web ACL, in the stack's region, to associate with the stage. Not with `waf`.
   * @default - no web ACL
   */
  readonly webAclArn?: string;

  /**
   * A regional custom domain (TLS 1.2 or newer) serving the API at its root: `https://<domainName>/payment`.
   * @default - only the execute-api URL, with the stage in its path
   */
  readonly customDomain?: CustomDomainOptions;

  /**
   * Closes the default `execute-api` endpoint, so clients can call only the custom domain; needs
   * `customDomain`.
   * @default false
   */
  readonly disableExecuteApiEndpoint?: boolean;
}

/** Which catalogue entry answers each API Gateway error, and whether it replaces API Gateway's status. */
interface GatewayErrorMapping {
  readonly type: apigateway.ResponseType;
  readonly error: ErrorName;
  /** DEFAULT_4XX/5XX cover many statuses: keep the one API Gateway chose. */
  readonly keepStatus?: boolean;
}

const GATEWAY_ERRORS: readonly GatewayErrorMapping[] = [
  // API Gateway answers an unknown path (or method) with "Missing Authentication Token".
  { type: apigateway.ResponseType.MISSING_AUTHENTICATION_TOKEN, error: 'notFound' },
  { type: apigateway.ResponseType.RESOURCE_NOT_FOUND, error: 'notFound' },
  { type: apigateway.ResponseType.THROTTLED, error: 'tooManyRequests' },
  { type: apigateway.ResponseType.QUOTA_EXCEEDED, error: 'tooManyRequests' },
  { type: apigateway.ResponseType.REQUEST_TOO_LARGE, error: 'payloadTooLarge' },
  { type: apigateway.ResponseType.UNSUPPORTED_MEDIA_TYPE, error: 'unsupportedMediaType' },
  { type: apigateway.ResponseType.ACCESS_DENIED, error: 'forbidden' },
  { type: apigateway.ResponseType.WAF_FILTERED, error: 'forbidden' },
  { type: apigateway.ResponseType.INTEGRATION_TIMEOUT, error: 'gatewayTimeout' },
  { type: apigateway.ResponseType.INTEGRATION_FAILURE, error: 'badGateway' },
  { type: apigateway.ResponseType.DEFAULT_4XX, error: 'clientError', keepStatus: true },
  { type: apigateway.ResponseType.DEFAULT_5XX, error: 'internalError', keepStatus: true },
];

/**
 * API Gateway reads mapping templates as VTL and static header values as single-quoted literals: refuse text
 * that would be interpreted rather than copied, so a catalogue edit cannot silently change a response.
 */
function vtlLiteral(text: string): string {
  if (/[$#\\]/.test(text)) throw new Error(`Response text must not contain "$", "#" or "\\": ${text}`);
  return text;
}

function staticHeaderValue(value: string): string {
  if (value.includes("'")) throw new Error(`Header value must not contain a single quote: ${value}`);
  return `'${value}'`;
}

/** Headers every API Gateway-made response carries, as in the Lambda's responses. */
function staticHeaders(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, staticHeaderValue(value)]));
}

function isWholeSecondsWithin(duration: Duration, min: number, max: number): boolean {
  const millis = duration.toMilliseconds();
  return millis % 1000 === 0 && millis / 1000 >= min && millis / 1000 <= max;
}

function describeDuration(duration: Duration): string {
  return `${duration.toMilliseconds() / 1000} s`;
}

/** Throws on the first invalid prop. Values that are tokens are left to CloudFormation. */
function validateProps(props: PaymentApiProps): void {
  const { keyCacheTtlSeconds: ttl, keyMaxStaleSeconds: stale, memorySize: memory } = PAYMENT_API_LIMITS;
  if (props.keyCacheTtl && !isWholeSecondsWithin(props.keyCacheTtl, ttl.min, ttl.max)) {
    throw new Error(
      `keyCacheTtl must be a whole number of seconds from ${ttl.min} to ${ttl.max}, got ${describeDuration(props.keyCacheTtl)}`,
    );
  }
  if (props.keyMaxStale && !isWholeSecondsWithin(props.keyMaxStale, stale.min, stale.max)) {
    throw new Error(
      `keyMaxStale must be a whole number of seconds from ${stale.min} to ${stale.max}, got ${describeDuration(props.keyMaxStale)}`,
    );
  }
  const memorySize = props.memorySize;
  if (
    memorySize !== undefined &&
    !Token.isUnresolved(memorySize) &&
    !(Number.isInteger(memorySize) && memorySize >= memory.min && memorySize <= memory.max)
  ) {
    throw new Error(
      `memorySize must be a whole number of MiB from ${memory.min} to ${memory.max}, got ${memorySize}`,
    );
  }
  const rate = props.throttlingRateLimit;
  if (rate !== undefined && !Token.isUnresolved(rate) && !(Number.isFinite(rate) && rate > 0)) {
    throw new Error(`throttlingRateLimit must be a positive number of requests per second, got ${rate}`);
  }
  const burst = props.throttlingBurstLimit;
  if (burst !== undefined && !Token.isUnresolved(burst) && !(Number.isInteger(burst) && burst > 0)) {
    throw new Error(`throttlingBurstLimit must be a positive whole number of requests, got ${burst}`);
  }
  if (props.stageName !== undefined) requireFormat('stageName', STAGE_NAME, props.stageName);
  if (props.rotation) validateKeyRotationOptions(props.rotation);
  validateMonitoringOptions(props);
  if (props.waf !== undefined && props.webAclArn !== undefined) {
    throw new Error('waf and webAclArn cannot both be set: the stage takes one web ACL, a new one or yours');
  }
  if (props.disableExecuteApiEndpoint === true && props.customDomain === undefined) {
    throw new Error(
      'disableExecuteApiEndpoint needs customDomain: with the default endpoint closed, the API has no other way in',
    );
  }
}

/**
 * POST /payment on API Gateway (REST), answered by one Lambda that checks the `App-id`/`App-key` headers against
 * keys kept in Secrets Manager. API Gateway itself answers every other method, path and its own errors with the
 * same JSON shape, without invoking the Lambda.
 */
export class PaymentApi extends Construct {
  public readonly api: apigateway.RestApi;
  public readonly handler: NodejsFunction;
  /** The keys secret, created here or the one passed in. */
  public readonly secret: secretsmanager.ISecret;
  /**
   * The full URL of POST /payment that clients can call: the execute-api URL, stage included, or the custom
   * domain's when the default endpoint is closed.
   */
  public readonly paymentUrl: string;
  /** The scheduled rotation of the secret, when the `rotation` prop asks for it. */
  public readonly keyRotation?: KeyRotation;
  /** Alarms, their topic, the dashboard and the saved queries. */
  public readonly monitoring: PaymentApiMonitoring;
  /** The web ACL association (and the web ACL it made), when `waf` or `webAclArn` is set. */
  public readonly firewall?: Firewall;
  /** The custom domain, when `customDomain` is set. */
  public readonly customDomain?: CustomDomain;
  /** `https://<domain>/payment`, when `customDomain` is set. */
  public readonly customDomainPaymentUrl?: string;

  constructor(scope: Construct, id: string, props: PaymentApiProps = {}) {
    super(scope, id);
    validateProps(props);

    this.secret =
      props.keysSecret ?? this.createSecret(props.secretEncryptionKey, props.rotation !== undefined);
    this.handler = this.createHandler(props);
    this.grantKeysRead(this.handler, props.secretEncryptionKey);
    if (props.rotation) {
      this.keyRotation = new KeyRotation(this, 'KeyRotation', {
        ...props.rotation,
        secret: this.secret,
        encryptionKey: props.secretEncryptionKey,
        logRetention: props.logRetention ?? PAYMENT_API_DEFAULTS.logRetention,
        logLevel: props.logLevel ?? PAYMENT_API_DEFAULTS.logLevel,
      });
    }

    const hasFirewall = props.waf !== undefined || props.webAclArn !== undefined;
    this.api = this.createApi(props, hasFirewall);
    const payment = this.api.root.addResource(PAYMENT_ROUTE.path.slice(1));
    this.addPaymentMethods(payment);
    this.addGatewayResponses();

    if (hasFirewall) {
      this.firewall = new Firewall(this, 'Firewall', {
        stage: this.api.deploymentStage,
        waf: props.waf,
        webAclArn: props.webAclArn,
      });
    }
    if (props.customDomain) {
      this.customDomain = new CustomDomain(this, 'CustomDomain', {
        ...props.customDomain,
        restApi: this.api,
      });
      this.customDomainPaymentUrl = this.customDomain.urlForPath(payment.path);
    }
    this.paymentUrl =
      props.disableExecuteApiEndpoint === true && this.customDomainPaymentUrl !== undefined
        ? this.customDomainPaymentUrl
        : this.api.urlForPath(payment.path);

    this.monitoring = new PaymentApiMonitoring(this, 'Monitoring', {
      ...pickMonitoringOptions(props),
      stage: this.api.deploymentStage,
      handler: this.handler,
      serviceName: Stack.of(this).stackName,
    });
  }

  /**
   * Secrets Manager generates the first key (it never appears in the template), so a fresh deploy answers 200
   * for app `demo` at once. Retained on stack deletion: it holds the only copy of the keys.
   */
  private createSecret(encryptionKey: kms.IKey | undefined, rotated: boolean): secretsmanager.Secret {
    const secret = new secretsmanager.Secret(this, 'KeysSecret', {
      description: 'payment-api keys: a JSON object mapping each App-id to a key or a list of keys',
      encryptionKey,
      generateSecretString: {
        secretStringTemplate: '{}',
        generateStringKey: DEMO_APP_ID,
        excludePunctuation: true,
        passwordLength: 48,
      },
      removalPolicy: RemovalPolicy.RETAIN,
    });
    if (!rotated) {
      NagSuppressions.addResourceSuppressions(secret, [
        {
          id: 'AwsSolutions-SMG4',
          reason:
            'The secret holds API keys that operators rotate with the keys CLI (several keys per app allow ' +
            'overlap); scheduled rotation is the opt-in `rotation` prop of this construct.',
        },
      ]);
    }
    return secret;
  }

  private createHandler(props: PaymentApiProps): NodejsFunction {
    const ttl = props.keyCacheTtl ?? PAYMENT_API_DEFAULTS.keyCacheTtl;
    const maxStale = props.keyMaxStale ?? PAYMENT_API_DEFAULTS.keyMaxStale;
    return createBundledFunction(this, 'Handler', {
      entry: lambdaEntry('payment', 'index.ts'),
      description: 'payment-api: authenticates POST /payment by App-id/App-key against Secrets Manager',
      roleDescription: 'payment-api handler: writes its own log group and reads the keys secret',
      memorySize: props.memorySize ?? PAYMENT_API_DEFAULTS.memorySize,
      timeout: HANDLER_TIMEOUT,
      logRetention: props.logRetention ?? PAYMENT_API_DEFAULTS.logRetention,
      // Settings only: the keys themselves are read from Secrets Manager at run time.
      environment: {
        [ENV.secretId]: this.secret.secretArn,
        [ENV.cacheTtlSeconds]: String(ttl.toSeconds()),
        [ENV.maxStaleSeconds]: String(maxStale.toSeconds()),
        [ENV.logLevel]: props.logLevel ?? PAYMENT_API_DEFAULTS.logLevel,
        [METRICS_ENV.namespace]: props.metricsNamespace ?? MONITORING_DEFAULTS.metricsNamespace,
        [METRICS_ENV.serviceName]: Stack.of(this).stackName,
      },
      tracing: props.tracing,
    });
  }

  /**
   * Read access to this one secret; with a customer key, `kms:Decrypt` on that key when Secrets Manager asks
   * for it on the handler's behalf. Granted on the role, so it also works for imported keys, whose key policy
   * this stack cannot change.
   */
  private grantKeysRead(handler: NodejsFunction, encryptionKey: kms.IKey | undefined): void {
    this.secret.grantRead(handler);
    if (encryptionKey) grantKeyUseThroughSecretsManager(handler, encryptionKey, ['kms:Decrypt']);
  }

  private createApi(props: PaymentApiProps, hasFirewall: boolean): apigateway.RestApi {
    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: props.logRetention ?? PAYMENT_API_DEFAULTS.logRetention,
    });

    const api = new apigateway.RestApi(this, 'Api', {
      restApiName: Stack.of(this).stackName,
      description: 'payment-api: POST /payment, authenticated by App-id/App-key',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint ?? false,
      // Execution logging would need the account-wide API Gateway CloudWatch role; access logs are enough.
      cloudWatchRole: false,
      deployOptions: {
        stageName: props.stageName ?? PAYMENT_API_DEFAULTS.stageName,
        throttlingRateLimit: props.throttlingRateLimit ?? PAYMENT_API_DEFAULTS.throttlingRateLimit,
        throttlingBurstLimit: props.throttlingBurstLimit ?? PAYMENT_API_DEFAULTS.throttlingBurstLimit,
        accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
        accessLogFormat: accessLogFormat(),
        tracingEnabled: props.tracing,
      },
    });
    // RestApi adds a stage-URL output of its own; the stack outputs the full /payment URL instead.
    api.node.tryRemoveChild('Endpoint');

    NagSuppressions.addResourceSuppressions(api, [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Request validation would answer 400 before the Lambda could give its uniform 401: the handler checks ' +
          'credentials first, then the media type and the body.',
      },
    ]);
    NagSuppressions.addResourceSuppressions(api.deploymentStage, [
      ...(hasFirewall
        ? []
        : [
            {
              id: 'AwsSolutions-APIG3',
              reason:
                'A WAF web ACL is opt-in (the `waf` or `webAclArn` prop) and costs a monthly fee; without one the ' +
                'stage has throttling and the Lambda authenticates every request.',
            },
          ]),
      {
        id: 'AwsSolutions-APIG6',
        reason:
          'Execution logging needs the account-wide API Gateway CloudWatch role, which this app does not manage; ' +
          "JSON access logs and the Lambda's own logs cover every request.",
      },
    ]);
    return api;
  }

  /**
   * POST goes to the Lambda. Every other method matches ANY (API Gateway prefers the explicit POST), whose mock
   * integration answers 405 without invoking the Lambda. The mock has no request template: with none, it
   * returns its default integration response whatever the request's content type.
   */
  private addPaymentMethods(payment: apigateway.Resource): void {
    const post = payment.addMethod(
      'POST',
      new apigateway.LambdaIntegration(this.handler, { proxy: true, allowTestInvoke: false }),
    );

    const methodNotAllowedHeaders = staticHeaders({ ...COMMON_HEADERS, ...METHOD_NOT_ALLOWED_HEADERS });
    const statusCode = String(ERROR_RESPONSES.methodNotAllowed.statusCode);
    const any = payment.addMethod(
      'ANY',
      new apigateway.MockIntegration({
        passthroughBehavior: apigateway.PassthroughBehavior.WHEN_NO_TEMPLATES,
        integrationResponses: [
          {
            statusCode,
            responseParameters: Object.fromEntries(
              Object.entries(methodNotAllowedHeaders).map(([name, value]) => [
                `method.response.header.${name}`,
                value,
              ]),
            ),
            responseTemplates: { 'application/json': vtlLiteral(errorBody('methodNotAllowed')) },
          },
        ],
      }),
      {
        methodResponses: [
          {
            statusCode,
            responseParameters: Object.fromEntries(
              Object.keys(methodNotAllowedHeaders).map((name) => [`method.response.header.${name}`, true]),
            ),
          },
        ],
      },
    );

    const noAuthorizer = [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'Callers authenticate with App-id/App-key headers that the Lambda checks against keys in Secrets Manager, ' +
          'so the method has no API Gateway authorizer.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'Callers are applications holding App-id/App-key pairs checked by the Lambda against Secrets Manager, ' +
          'not Cognito users.',
      },
    ];
    NagSuppressions.addResourceSuppressions(post, noAuthorizer);
    NagSuppressions.addResourceSuppressions(any, [
      {
        id: 'AwsSolutions-APIG4',
        reason:
          'This method only answers 405 Method Not Allowed from a mock integration; it reaches no backend.',
      },
      {
        id: 'AwsSolutions-COG4',
        reason:
          'This method only answers 405 Method Not Allowed from a mock integration; it reaches no backend.',
      },
    ]);
  }

  /** API Gateway's own errors in the handler's JSON shape: fixed bodies, no per-request values. */
  private addGatewayResponses(): void {
    const responseHeaders = staticHeaders(COMMON_HEADERS);
    for (const { type, error, keepStatus } of GATEWAY_ERRORS) {
      this.api.addGatewayResponse(type.responseType, {
        type,
        statusCode: keepStatus ? undefined : String(ERROR_RESPONSES[error].statusCode),
        responseHeaders,
        templates: { 'application/json': vtlLiteral(errorBody(error)) },
      });
    }
  }
}

/**
 * One JSON object per request, every value set by API Gateway itself: no headers (App-key travels in one) and
 * no caller-chosen text such as the user agent, which could break the JSON. Every value is quoted so a missing
 * one ("-") still parses.
 */
function accessLogFormat(): apigateway.AccessLogFormat {
  const F = apigateway.AccessLogField;
  const fields: Record<string, string> = {
    requestId: F.contextRequestId(),
    extendedRequestId: F.contextExtendedRequestId(),
    requestTime: F.contextRequestTime(),
    sourceIp: F.contextIdentitySourceIp(),
    httpMethod: F.contextHttpMethod(),
    resourcePath: F.contextResourcePath(),
    protocol: F.contextProtocol(),
    status: F.contextStatus(),
    responseLength: F.contextResponseLength(),
    responseLatency: F.contextResponseLatency(),
    integrationStatus: F.contextIntegrationStatus(),
    integrationLatency: F.contextIntegrationLatency(),
    errorResponseType: F.contextErrorResponseType(),
  };
  return apigateway.AccessLogFormat.custom(JSON.stringify(fields));
}
