/**
 * The payment Lambda as both entry points build it (index.ts without rate limits, rate-limited.ts with them).
 * Called once, at module scope: everything here lives for the execution environment (the SDK clients, the key
 * cache, and the first fetch of the keys, started now so it overlaps the rest of the cold start).
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { createJsonLogger } from '../../shared/logger';
import { createHandler, type RequestLimits } from './create-handler';
import { createEmfMetrics } from './emf-metrics';
import { KeyCache } from './key-cache';
import { METRIC } from './metric-names';
import { readRequestId } from './proxy-request';
import { refreshMetrics } from './refresh-metrics';
import { secretsManagerSource } from './secrets-manager-source';
import { readLambdaSettings } from './settings';

export type LambdaHandler = (
  event: unknown,
  context?: Pick<Context, 'awsRequestId'>,
) => Promise<APIGatewayProxyResult>;

export interface LambdaOptions {
  /** Per-app rate limits. Default: none. */
  readonly limits?: RequestLimits;
}

/**
 * Every line logged during an invocation (the key cache's too) carries the Lambda request id, the API Gateway
 * request id and whether this is the environment's first invocation; the invocation's metrics, with those the
 * key cache counted since the last one, are written as one EMF line when it ends.
 */
export function composeLambdaHandler(options: LambdaOptions = {}): LambdaHandler {
  const settings = readLambdaSettings(process.env);
  const logger = createJsonLogger(settings.logLevel, undefined, { service: settings.serviceName });
  const metrics = createEmfMetrics({
    namespace: settings.metricsNamespace,
    serviceName: settings.serviceName,
  });
  const keys = new KeyCache({
    source: secretsManagerSource(settings.secretId),
    logger,
    ttlMs: settings.ttlMs,
    maxStaleMs: settings.maxStaleMs,
    observer: refreshMetrics(metrics, { keyExpiryWarningMs: settings.keyExpiryWarningMs }),
  });
  keys.warm();

  const { limits } = options;
  const handle = createHandler({ keys, logger, metrics, ...(limits === undefined ? {} : { limits }) });
  let coldStart = true;

  return async (event, context) => {
    logger.setContext({
      function_request_id: context?.awsRequestId,
      apiRequestId: readRequestId(event),
      cold_start: coldStart,
    });
    if (coldStart) metrics.count(METRIC.coldStart);
    coldStart = false;
    try {
      return await handle(event);
    } finally {
      metrics.flush();
      logger.setContext({});
    }
  };
}
