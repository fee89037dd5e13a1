/**
 * The benchmark's no-SDK floor (npm run bench -- --only client): the payment handler as lambda/payment/compose.ts
 * composes it (settings, logger, metrics, the key cache, the handler), with the secret's text read from memory
 * (BENCH_SECRET_STRING) instead of Secrets Manager: no AWS client, no HTTP, no signing. The lowest a cold start of
 * this handler can go; not part of the product.
 */
import type { Context } from 'aws-lambda';
import { createJsonLogger } from '../../shared/logger';
import { createHandler } from '../../lambda/payment/create-handler';
import { createEmfMetrics } from '../../lambda/payment/emf-metrics';
import { readRequestId } from '../../lambda/payment/proxy-request';
import { refreshMetrics } from '../../lambda/payment/refresh-metrics';
import { readLambdaSettings } from '../../lambda/payment/settings';
import { ShardedKeys } from '../../lambda/payment/sharded-keys';

const settings = readLambdaSettings(process.env);
const logger = createJsonLogger(settings.logLevel, undefined, { service: settings.serviceName });
const metrics = createEmfMetrics({ namespace: settings.metricsNamespace, serviceName: settings.serviceName });
const keys = new ShardedKeys({
  layout: settings.registry,
  sourceFor: () => ({
    description: 'memory',
    fetchSecretString: () => Promise.resolve(process.env.BENCH_SECRET_STRING ?? '{}'),
  }),
  logger,
  ttlMs: settings.ttlMs,
  maxStaleMs: settings.maxStaleMs,
  observer: refreshMetrics(metrics),
});
keys.warm();
const handle = createHandler({ keys, logger, metrics });

export const handler = async (event: unknown, context?: Pick<Context, 'awsRequestId'>) => {
  logger.setContext({ function_request_id: context?.awsRequestId, apiRequestId: readRequestId(event) });
  try {
    return await handle(event);
  } finally {
    metrics.flush();
    logger.setContext({});
  }
};
