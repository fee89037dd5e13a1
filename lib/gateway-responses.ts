import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { COMMON_HEADERS, ERROR_RESPONSES, errorBody, type ErrorName } from '../shared/api/responses';
import { staticHeaders, vtlLiteral } from './api-gateway-text';

/** Which catalogue entry answers each API Gateway error, and whether it replaces API Gateway's status. */
interface GatewayErrorMapping {
  readonly type: apigateway.ResponseType;
  readonly error: ErrorName;
  /** DEFAULT_4XX/5XX cover many statuses: keep the one API Gateway chose. */
  readonly keepStatus?: boolean;
}

export const GATEWAY_ERRORS: readonly GatewayErrorMapping[] = [
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
 * API Gateway's own errors (unknown path, throttled, WAF block, integration failure...) in the handler's JSON
 * shape: fixed bodies, no per-request values. Added to `api` itself, one child per response type.
 */
export function addGatewayResponses(api: apigateway.RestApi): apigateway.GatewayResponse[] {
  const responseHeaders = staticHeaders(COMMON_HEADERS);
  return GATEWAY_ERRORS.map(({ type, error, keepStatus }) =>
    api.addGatewayResponse(type.responseType, {
      type,
      statusCode: keepStatus ? undefined : String(ERROR_RESPONSES[error].statusCode),
      responseHeaders,
      templates: { 'application/json': vtlLiteral(errorBody(error)) },
    }),
  );
}
