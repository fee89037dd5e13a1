import type { APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, readCredentials } from '../keys/authenticate';
import { KeysUnavailableError, type KeyringProvider } from '../keys/key-cache';
import { describeError, type Logger } from '../shared/logger';
import { contentTypeProblem } from './media-type';
import { readProxyRequest } from './proxy-request';
import { readJsonBody } from './request-body';
import { errorResponse, jsonResponse, SUCCESS_BODY, UNAUTHORIZED_HEADERS } from './responses';

export interface HandlerDependencies {
  readonly keys: KeyringProvider;
  readonly logger: Logger;
}

/**
 * Takes `unknown`: that is what the Lambda runtime can hand over (any JSON), and readProxyRequest makes sense of
 * it. An API Gateway REST proxy event is one such value.
 */
export type PaymentHandler = (event: unknown) => Promise<APIGatewayProxyResult>;

/**
 * The POST /payment handler: authentication first (one 401 for every cause), then the media type (415), then
 * the body (400). The event is never logged whole (it carries App-key); each request logs one line with its
 * outcome. Whatever the event holds, the answer is one of those statuses, or 503 when keys cannot be read.
 */
export function createHandler({ keys, logger }: HandlerDependencies): PaymentHandler {
  return async (event) => {
    let requestId: string | undefined;
    try {
      const request = readProxyRequest(event);
      requestId = request.requestId;
      const context = { requestId, sourceIp: request.sourceIp };

      const credentials = readCredentials(request.headers.all('app-id'), request.headers.all('app-key'));
      if (!credentials.ok) {
        logger.info('request refused', { ...context, status: 401, reason: credentials.reason });
        return errorResponse('unauthorized', requestId, UNAUTHORIZED_HEADERS);
      }

      const { keyring } = await keys.getKeys();
      const decision = authenticate(credentials.credentials, keyring);
      if (!decision.ok) {
        logger.info('request refused', { ...context, status: 401, reason: decision.reason });
        return errorResponse('unauthorized', requestId, UNAUTHORIZED_HEADERS);
      }

      const mediaTypeProblem = contentTypeProblem(request.headers.all('content-type'));
      if (mediaTypeProblem !== undefined) {
        logger.info('request refused', {
          ...context,
          status: 415,
          appId: decision.appId,
          reason: mediaTypeProblem,
        });
        return errorResponse('unsupportedMediaType', requestId);
      }
      const body = readJsonBody(request.body);
      if (!body.ok) {
        logger.info('request refused', {
          ...context,
          status: 400,
          appId: decision.appId,
          reason: body.problem,
        });
        return errorResponse('badRequest', requestId);
      }

      logger.info('request accepted', {
        ...context,
        status: 200,
        appId: decision.appId,
        keyId: decision.keyId,
      });
      return jsonResponse(200, JSON.stringify(SUCCESS_BODY), requestId);
    } catch (error) {
      if (error instanceof KeysUnavailableError) {
        logger.error('keys unavailable', { requestId, status: 503, error: describeError(error) });
        return errorResponse('unavailable', requestId);
      }
      logger.error('unexpected error', { requestId, status: 500, error: describeError(error) });
      return errorResponse('internalError', requestId);
    }
  };
}
