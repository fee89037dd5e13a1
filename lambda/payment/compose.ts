/**
 * The payment Lambda as both entry points build it (index.ts without rate limits, rate-limited.ts with them).
 * Called once, at module scope: everything here lives for the execution environment (the AWS clients and their
 * connections, one key cache per shard of the registry, each created when a request first needs it, and, with one
 * secret, its first fetch, started now so it overlaps the rest of the cold start).
 */
import type { APIGatewayProxyResult, Context } from 'aws-lambda';
import { readAwsAccess, type AwsAccess, type AwsJsonServiceName } from '../../shared/aws/aws-environment';
import { createJsonLogger } from '../../shared/logger';
import { createHandler, type RequestLimits } from './create-handler';
import { createEmfMetrics } from './emf-metrics';
import { KeysUnavailableError, type EntryBuilding, type KeyringProvider } from './key-cache';
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
  /** Per-app rate limits, built with the Lambda's DynamoDB access (a limiter needs its client). Default: none. */
  readonly limits?: (aws: AwsAccess<'dynamoDb'>) => RequestLimits;
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
  const { limits, entryBuilding } = options;
  const services: AwsJsonServiceName[] =
    limits === undefined ? ['secretsManager'] : ['secretsManager', 'dynamoDb'];
  const aws = readAwsAccess(process.env, services);
  let keys: KeyringProvider;
  let requestLimits: RequestLimits | undefined;
  if (aws.ok) {
    // One client for every shard: one connection pool, one set of bounds.
    const client = createPaymentSecretsManagerClient({
      target: aws.value.targets.secretsManager,
      credentials: aws.value.credentials,
    });
    const sharded = new ShardedKeys({
      layout: settings.registry,
      sourceFor: (_index, secretId) => secretsManagerSource(secretId, client),
      logger,
      ttlMs: settings.ttlMs,
      maxStaleMs: settings.maxStaleMs,
      observer: refreshMetrics(metrics),
      ...(entryBuilding === undefined ? {} : { entryBuilding }),
    });
    sharded.warm();
    keys = sharded;
    requestLimits = limits?.(aws.value);
  } else {
    // Nothing can be signed or sent: one line now, naming the setting (never a credential), and 503 to every request.
    logger.error('AWS settings unusable: every request gets 503', { problem: aws.problem });
    keys = unavailableKeys(`AWS settings unusable: ${aws.problem}`);
  }

  const handle = createHandler({
    keys,
    logger,
    metrics,
    keyFormat: settings.keyFormat,
    ...(requestLimits === undefined ? {} : { limits: requestLimits }),
  });
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

/** Keys that can never be read: every request gets 503 `unavailable`, counted in Unavailable, as any unreadable key. */
function unavailableKeys(reason: string): KeyringProvider {
  return { getKeys: () => Promise.reject(new KeysUnavailableError(reason)) };
}
