/**
 * The payment Lambda as both entry points build it (index.ts without rate limits, rate-limited.ts with them).
 * Called once, at module scope: everything here lives for the execution environment (the SDK clients, one key
 * cache per shard of the registry, each created when a request first needs it, and, with one secret, its first
 * fetch, started now so it overlaps the rest of the cold start).
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { createJsonLogger } from '../../shared/logger';
import { createHandler, type RequestLimits } from './create-handler';
import { createEmfMetrics } from './emf-metrics';
import type { EntryBuilding } from './key-cache';
import { METRIC } from './metric-names';
import { readRequestId } from './proxy-request';
import { refreshMetrics } from './refresh-metrics';
import { createPaymentSecretsManagerClient, secretsManagerSource } from './secrets-manager-source';
import { readLambdaSettings } from './settings';
import { ShardedKeys } from './sharded-keys';

export type LambdaHandler = (
  event: unknown,
  context?: Pick<Context, 'awsRequestId'>,
) => Promise<APIGatewayProxyResult>;

export interface LambdaOptions {
  /** Per-app rate limits. Default: none. */
  readonly limits?: RequestLimits;
  /** How shards become keyrings. Default: ShardedKeys' (eager for one secret, lazy for several); the bench compares. */
  readonly entryBuilding?: EntryBuilding;
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
  // One client for every shard: one connection pool, one set of bounds.
  const client = createPaymentSecretsManagerClient();
  const { limits, entryBuilding } = options;
  const keys = new ShardedKeys({
    layout: settings.registry,
    sourceFor: (_index, secretId) => secretsManagerSource(secretId, client),
    logger,
    ttlMs: settings.ttlMs,
    maxStaleMs: settings.maxStaleMs,
    observer: refreshMetrics(metrics),
    ...(entryBuilding === undefined ? {} : { entryBuilding }),
  });
  keys.warm();

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
