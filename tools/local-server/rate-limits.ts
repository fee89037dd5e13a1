import type { RequestLimits } from '../../lambda/payment/create-handler';
import {
  createLimiterDynamoDbClient,
  DynamoDbCounterStore,
} from '../../lambda/payment/rate-limit/dynamodb-counter-store';
import { createMemoryRateLimiter } from '../../lambda/payment/rate-limit/memory-limiter';
import { SharedRateLimiter } from '../../lambda/payment/rate-limit/shared-limiter';
import { AWS_JSON_SERVICES } from '../../shared/aws/aws-environment';
import type { AwsJsonClient } from '../../shared/aws/aws-json-client';
import type { HttpTransport } from '../../shared/aws/http-transport';
import { AWS_SERVICES, readAwsClientSettings, type AwsClientSettings } from '../common/aws-settings';
import type { Env } from '../common/tool-io';
import { localAwsAccess } from './aws-access';
import type { LocalRateLimiting } from './local-settings';

/**
 * The limiter's DynamoDB client settings from the operator's environment, read as the tools read them
 * (tools/common/aws-settings.ts): region, profile and credentials as for every service; the endpoint from
 * AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL. Pure.
 */
export function limiterClientSettings(env: Env): AwsClientSettings {
  return readAwsClientSettings(env, AWS_SERVICES.dynamoDb);
}

/**
 * The Lambda's DynamoDB client for the shared limiter, configured from `env` (region and credentials from the SDK's
 * full chain). Its time is the limiter's budget (RATE_LIMIT_DEADLINE_MS), which each check passes down.
 */
export function createLocalLimiterClient(env: Env, transport?: HttpTransport): AwsJsonClient {
  return createLimiterDynamoDbClient({
    ...localAwsAccess(env, AWS_JSON_SERVICES.dynamoDb),
    ...(transport === undefined ? {} : { transport }),
  });
}

/**
 * What the handler counts requests with: nothing (limits off), the in-memory limiter of one process, or the
 * DynamoDB limiter the Lambda uses, shared by every server pointed at the same table.
 */
export function createLocalRateLimits(
  rateLimiting: LocalRateLimiting,
  env: Env,
  /** How DynamoDB is reached; tests pass a fake. Default: Node's HTTP stack. */
  transport?: HttpTransport,
): RequestLimits | undefined {
  switch (rateLimiting.kind) {
    case 'off':
      return undefined;
    case 'memory':
      // The in-memory limiter always answers: the failure mode never comes into play.
      return { limiter: createMemoryRateLimiter(), defaultLimit: rateLimiting.defaultLimit, failure: 'open' };
    case 'dynamodb':
      return {
        limiter: new SharedRateLimiter({
          store: new DynamoDbCounterStore({
            client: createLocalLimiterClient(env, transport),
            tableName: rateLimiting.tableName,
          }),
          budgetMs: rateLimiting.budgetMs,
          // As the Lambda: failing local, an environment never accepts more than the burst in a window.
          failure: rateLimiting.failure,
        }),
        defaultLimit: rateLimiting.defaultLimit,
        failure: rateLimiting.failure,
      };
  }
}
