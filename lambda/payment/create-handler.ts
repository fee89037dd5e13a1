import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { authenticate, readCredentials } from '../keys/authenticate';
import { KeysUnavailableError, type KeyringProvider } from '../keys/key-cache';
import { describeError, type Logger } from '../shared/logger';
import { RequestHeaders } from './headers';
import { isAcceptableJsonBody, isJsonContentType } from './request-body';
import { errorResponse, jsonResponse, SUCCESS_BODY, UNAUTHORIZED_HEADERS } from './responses';

export interface HandlerDependencies {
  readonly keys: KeyringProvider;
  readonly logger: Logger;
}

export type PaymentHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * The POST /payment handler: authentication first, then the media type, then the body. The event is never
 * logged whole (it carries App-key); each request logs one line with its outcome.
 */
export function createHandler({ keys, logger }: HandlerDependencies): PaymentHandler {
  return async (event) => {
    // Optional chaining: hand-built events (tests, other adapters) may lack a request context.
    const requestId = (event.requestContext as Partial<APIGatewayProxyEvent['requestContext']> | undefined)
      ?.requestId;
    try {
      const headers = RequestHeaders.fromEvent(event);
      const credentials = readCredentials(headers.all('app-id'), headers.all('app-key'));
      if (!credentials.ok) {
        logger.info('request refused', { requestId, status: 401, reason: credentials.reason });
        return errorResponse('unauthorized', requestId, UNAUTHORIZED_HEADERS);
      }

      const { keyring } = await keys.getKeys();
      const decision = authenticate(credentials.credentials, keyring);
      if (!decision.ok) {
        logger.info('request refused', { requestId, status: 401, reason: decision.reason });
        return errorResponse('unauthorized', requestId, UNAUTHORIZED_HEADERS);
      }

      if (!isJsonContentType(headers.all('content-type'))) {
        logger.info('request refused', { requestId, status: 415, appId: decision.appId });
        return errorResponse('unsupportedMediaType', requestId);
      }
      if (!isAcceptableJsonBody(event.body, event.isBase64Encoded)) {
        logger.info('request refused', { requestId, status: 400, appId: decision.appId });
        return errorResponse('badRequest', requestId);
      }

      logger.info('request accepted', {
        requestId,
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
