import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import {
  COMMON_HEADERS,
  ERROR_RESPONSES,
  errorBody,
  METHOD_NOT_ALLOWED_HEADERS,
} from '../shared/api/responses';
import { DEFAULT_STAGE_NAME, PAYMENT_ROUTE } from '../shared/api/route';
import { staticHeaders, vtlLiteral } from './api-gateway-text';
import {
  requireFormat,
  requirePositiveNumber,
  requireWholeNumber,
  type TextFormat,
  type WholeNumberRange,
} from './validation';

/** The stage settings PaymentApi exposes as its own props. */
export interface RestApiOptions {
  /**
   * API Gateway stage, the first path segment of the URL. 1 to 128 letters, digits, "-" or "_".
   * @default 'prod'
   */
  readonly stageName?: string;

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
}

export const REST_API_DEFAULTS = {
  stageName: DEFAULT_STAGE_NAME,
  throttlingRateLimit: 50,
  throttlingBurstLimit: 100,
} as const satisfies Partial<Record<keyof RestApiOptions, unknown>>;

export const REST_API_LIMITS = {
  throttlingRateLimit: { unit: 'requests per second' },
  throttlingBurstLimit: { min: 1, unit: 'requests' } satisfies WholeNumberRange,
} as const;

export const STAGE_NAME: TextFormat = {
  pattern: /^[A-Za-z0-9_-]{1,128}$/,
  description: '1 to 128 letters, digits, "-" or "_"',
};

/** Throws on the first invalid option. Values that are tokens are left to CloudFormation. */
export function validateRestApiOptions(options: RestApiOptions): void {
  if (options.throttlingRateLimit !== undefined) {
    requirePositiveNumber(
      'throttlingRateLimit',
      REST_API_LIMITS.throttlingRateLimit.unit,
      options.throttlingRateLimit,
    );
  }
  if (options.throttlingBurstLimit !== undefined) {
    requireWholeNumber(
      'throttlingBurstLimit',
      REST_API_LIMITS.throttlingBurstLimit,
      options.throttlingBurstLimit,
    );
  }
  if (options.stageName !== undefined) requireFormat('stageName', STAGE_NAME, options.stageName);
}

export interface PaymentRestApiProps extends RestApiOptions {
  /** The Lambda that answers POST /payment. */
  readonly handler: lambda.IFunction;
  /** Receives the stage's access logs, one JSON object per request. */
  readonly accessLogs: logs.ILogGroup;
  /** The API's name in API Gateway: the stack name, so environments in one account stay apart. */
  readonly restApiName: string;
  /**
   * X-Ray tracing of the stage.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Closes the default `execute-api` endpoint, so clients can call only a custom domain.
   * @default false
   */
  readonly disableExecuteApiEndpoint?: boolean;
  /**
   * Whether a web ACL will be associated with the stage; without one, cdk-nag's missing-WAF finding is
   * acknowledged on the stage.
   * @default false
   */
  readonly webAclAssociated?: boolean;
  /**
   * Throttles of their own for some routes, beside the stage's, by `<path>/<METHOD>` (for example
   * `/secret-scanning/POST`): each route gets its own budget, so one route cannot spend another's.
   * @default - only the stage's throttle
   */
  readonly methodThrottling?: Readonly<
    Record<string, { readonly rateLimit: number; readonly burstLimit: number }>
  >;
}

/**
 * The regional REST API: one stage with throttling and JSON access logs, POST /payment answered by the Lambda,
 * and every other method on /payment answered 405 by API Gateway itself. A RestApi of its own kind rather than a
 * wrapper around one, so the API keeps the construct path, and its resources the logical IDs, that deployed
 * stacks have (a deployment's logical ID hashes the API's path).
 */
export class PaymentRestApi extends apigateway.RestApi {
  /** The `/payment` resource. */
  public readonly paymentResource: apigateway.Resource;
  /** The full execute-api URL of POST /payment, stage included. */
  public readonly paymentUrl: string;

  constructor(scope: Construct, id: string, props: PaymentRestApiProps) {
    validateRestApiOptions(props);
    super(scope, id, {
      restApiName: props.restApiName,
      description: 'payment-api: POST /payment, authenticated by App-id/App-key',
      endpointTypes: [apigateway.EndpointType.REGIONAL],
      disableExecuteApiEndpoint: props.disableExecuteApiEndpoint ?? false,
      // Execution logging would need the account-wide API Gateway CloudWatch role; access logs are enough.
      cloudWatchRole: false,
      deployOptions: {
        stageName: props.stageName ?? REST_API_DEFAULTS.stageName,
        throttlingRateLimit: props.throttlingRateLimit ?? REST_API_DEFAULTS.throttlingRateLimit,
        throttlingBurstLimit: props.throttlingBurstLimit ?? REST_API_DEFAULTS.throttlingBurstLimit,
        accessLogDestination: new apigateway.LogGroupLogDestination(props.accessLogs),
        accessLogFormat: accessLogFormat(),
        tracingEnabled: props.tracing,
        ...(props.methodThrottling === undefined
          ? {}
          : {
              methodOptions: Object.fromEntries(
                Object.entries(props.methodThrottling).map(([route, throttle]) => [
                  route,
                  { throttlingRateLimit: throttle.rateLimit, throttlingBurstLimit: throttle.burstLimit },
                ]),
              ),
            }),
      },
    });
    // RestApi adds a stage-URL output of its own; the stack outputs the full /payment URL instead.
    this.node.tryRemoveChild('Endpoint');
    this.acknowledgeApiFindings(props.webAclAssociated ?? false);

    this.paymentResource = this.root.addResource(PAYMENT_ROUTE.path.slice(1));
    this.addPaymentMethods(props.handler);
    this.paymentUrl = this.urlForPath(this.paymentResource.path);
  }

  private acknowledgeApiFindings(webAclAssociated: boolean): void {
    NagSuppressions.addResourceSuppressions(this, [
      {
        id: 'AwsSolutions-APIG2',
        reason:
          'Request validation would answer 400 before the Lambda could give its uniform 401: the handler checks ' +
          'credentials first, then the media type and the body.',
      },
    ]);
    NagSuppressions.addResourceSuppressions(this.deploymentStage, [
      ...(webAclAssociated
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
  }

  /**
   * POST goes to the Lambda. Every other method matches ANY (API Gateway prefers the explicit POST), whose mock
   * integration answers 405 without invoking the Lambda. The mock has no request template: with none, it
   * returns its default integration response whatever the request's content type.
   */
  private addPaymentMethods(handler: lambda.IFunction): void {
    const post = this.paymentResource.addMethod(
      'POST',
      new apigateway.LambdaIntegration(handler, { proxy: true, allowTestInvoke: false }),
    );

    const methodNotAllowedHeaders = staticHeaders({ ...COMMON_HEADERS, ...METHOD_NOT_ALLOWED_HEADERS });
    const statusCode = String(ERROR_RESPONSES.methodNotAllowed.statusCode);
    const any = this.paymentResource.addMethod(
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

    NagSuppressions.addResourceSuppressions(post, [
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
    ]);
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
}

/**
 * One JSON object per request, every value set by API Gateway itself: no headers (App-key travels in one) and
 * no caller-chosen text such as the user agent, which could break the JSON. Every value is quoted so a missing
 * one ("-") still parses. API Gateway's request id is `apiRequestId`, as on the function's lines, so one filter
 * finds a request in both log groups.
 */
function accessLogFormat(): apigateway.AccessLogFormat {
  const F = apigateway.AccessLogField;
  const fields: Record<string, string> = {
    apiRequestId: F.contextRequestId(),
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
