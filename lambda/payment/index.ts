/**
 * Lambda entry point. Everything at module scope runs once per execution environment: the SDK client, the key
 * cache, and the first fetch of the keys, started here so it overlaps the rest of the cold start.
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { KeyCache } from './key-cache';
import { secretsManagerSource } from './secrets-manager-source';
import { createJsonLogger } from '../../shared/logger';
import { createHandler } from './create-handler';
import { createEmfMetrics } from './emf-metrics';
import { METRIC } from './metric-names';
import { readRequestId } from './proxy-request';
import { refreshMetrics } from './refresh-metrics';
import { readLambdaSettings } from './settings';

const settings = readLambdaSettings(process.env);
const logger = createJsonLogger(settings.logLevel, undefined, { service: settings.serviceName });
const metrics = createEmfMetrics({ namespace: settings.metricsNamespace, serviceName: settings.serviceName });
const keys = new KeyCache({
  source: secretsManagerSource(settings.secretId),
  logger,
  ttlMs: settings.ttlMs,
  maxStaleMs: settings.maxStaleMs,
  observer: refreshMetrics(metrics, { keyExpiryWarningMs: settings.keyExpiryWarningMs }),
});
keys.warm();

const handle = createHandler({ keys, logger, metrics });
let coldStart = true;

/**
 * Every line logged during an invocation (the key cache's too) carries the Lambda request id, the API Gateway
 * request id and whether this is the environment's first invocation; the invocation's metrics, with those the
 * key cache counted since the last one, are written as one EMF line when it ends.
 */
export async function handler(
  event: unknown,
  context?: Pick<Context, 'awsRequestId'>,
): Promise<APIGatewayProxyResult> {
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
}
