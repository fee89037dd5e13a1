import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  authenticate,
  readCredentials,
  type AuthDecision,
  type KeyRuleFailureReason,
} from '../../shared/keys/authenticate';
import { KeysUnavailableError, type KeyringProvider } from './key-cache';
import { describeError, type LogFields, type Logger } from '../../shared/logger';
import { contentTypeProblem } from './media-type';
import { METRIC, type CountedMetricName } from './metric-names';
import { NO_METRICS, type MetricsRecorder } from './metrics-recorder';
import { readProxyRequest } from './proxy-request';
import { readJsonBody } from './request-body';
import { errorResponse, jsonResponse, SUCCESS_BODY, UNAUTHORIZED_HEADERS } from '../../shared/api/responses';

export interface HandlerDependencies {
  readonly keys: KeyringProvider;
  readonly logger: Logger;
  /** Counts each request's outcome, and answers from stale keys. Default: counts nowhere. */
  readonly metrics?: MetricsRecorder;
  /** The clock keys expire by, read at each request. Default Date.now. */
  readonly now?: () => number;
}

/**
 * Takes `unknown`: that is what the Lambda runtime can hand over (any JSON), and readProxyRequest makes sense of
 * it. An API Gateway REST proxy event is one such value.
 */
export type PaymentHandler = (event: unknown) => Promise<APIGatewayProxyResult>;

/** The metric each refusal counts under. */
const REFUSAL_METRICS: Readonly<
  Record<'unauthorized' | 'unsupportedMediaType' | 'badRequest', CountedMetricName>
> = {
  unauthorized: METRIC.unauthorized,
  unsupportedMediaType: METRIC.unsupportedMediaType,
  badRequest: METRIC.badRequest,
};

/**
 * The refusals of a key that matched, counted beside Unauthorized: the dashboard shows them, since each means a
 * partner to call (one still using a key past its expiry, one calling from a network it has not declared).
 */
const KEY_RULE_METRICS: Readonly<Record<KeyRuleFailureReason, CountedMetricName>> = {
  expired_key: METRIC.expiredKey,
  source_not_allowed: METRIC.sourceNotAllowed,
};

/**
 * What a 401's log line may say of the caller. The app id only when it names a real app: an unknown one is whatever
 * the caller sent (a key, even). A key that matched but was refused by a rule is named by its id, so the saved query
 * can tell which partner still uses an expired key or calls from a new network.
 */
function refusedCaller(decision: Extract<AuthDecision, { ok: false }>, sentAppId: string): LogFields {
  switch (decision.reason) {
    case 'unknown_app':
      return {};
    case 'wrong_key':
      return { appId: sentAppId };
    case 'expired_key':
    case 'source_not_allowed':
      return { appId: decision.appId, keyId: decision.keyId };
  }
}

/**
 * The POST /payment handler: authentication first (one 401 for every cause), then the media type (415), then
 * the body (400). The event is never logged whole (it carries App-key); each request logs one line with its
 * outcome and counts one outcome metric. Whatever the event holds, the answer is one of those statuses, or 503
 * when keys cannot be read.
 */
export function createHandler({
  keys,
  logger,
  metrics = NO_METRICS,
  now = Date.now,
}: HandlerDependencies): PaymentHandler {
  return async (event) => {
    // Never throws, whatever the event holds.
    const request = readProxyRequest(event);
    const apiRequestId = request.requestId;
    const context: LogFields = { apiRequestId, sourceIp: request.sourceIp };
    try {
      const refuse = (
        name: keyof typeof REFUSAL_METRICS,
        fields: LogFields,
        headers: Readonly<Record<string, string>> = {},
      ): APIGatewayProxyResult => {
        const response = errorResponse(name, apiRequestId, headers);
        logger.info('request refused', { ...context, status: response.statusCode, ...fields });
        metrics.count(REFUSAL_METRICS[name]);
        return response;
      };

      const credentials = readCredentials(request.headers.all('app-id'), request.headers.all('app-key'));
      if (!credentials.ok)
        return refuse('unauthorized', { reason: credentials.reason }, UNAUTHORIZED_HEADERS);

      const { keyring, stale } = await keys.getKeys();
      if (stale) metrics.count(METRIC.staleKeysServed);
      const keysUsed: LogFields = stale ? { staleKeys: true } : {};
      const decision = authenticate(credentials.credentials, keyring, {
        now: now(),
        sourceIp: request.sourceIp,
      });
      if (!decision.ok) {
        const known = refusedCaller(decision, credentials.credentials.appId);
        if (decision.reason === 'expired_key' || decision.reason === 'source_not_allowed') {
          metrics.count(KEY_RULE_METRICS[decision.reason]);
        }
        return refuse(
          'unauthorized',
          { ...keysUsed, reason: decision.reason, ...known },
          UNAUTHORIZED_HEADERS,
        );
      }

      const mediaTypeProblem = contentTypeProblem(request.headers.all('content-type'));
      if (mediaTypeProblem !== undefined) {
        return refuse('unsupportedMediaType', {
          ...keysUsed,
          appId: decision.appId,
          reason: mediaTypeProblem,
        });
      }
      const body = readJsonBody(request.body);
      if (!body.ok) return refuse('badRequest', { ...keysUsed, appId: decision.appId, reason: body.problem });

      logger.info('request accepted', {
        ...context,
        ...keysUsed,
        status: 200,
        appId: decision.appId,
        keyId: decision.keyId,
      });
      metrics.count(METRIC.accepted);
      return jsonResponse(200, JSON.stringify(SUCCESS_BODY), apiRequestId);
    } catch (error) {
      if (error instanceof KeysUnavailableError) {
        logger.error('keys unavailable', { ...context, status: 503, error: describeError(error) });
        metrics.count(METRIC.unavailable);
        return errorResponse('unavailable', apiRequestId);
      }
      logger.error('unexpected error', { ...context, status: 500, error: describeError(error) });
      metrics.count(METRIC.internalError);
      return errorResponse('internalError', apiRequestId);
    }
  };
}
