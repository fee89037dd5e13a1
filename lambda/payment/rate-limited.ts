/**
 * The payment Lambda's entry point with per-app rate limits (`appRateLimit`): the limiter counts in the stack's
 * DynamoDB table, shared by every execution environment. Its client lives at module scope, like the Secrets
 * Manager one.
 */
import { composeLambdaHandler } from './compose';
import {
  createLimiterDynamoDbClient,
  DynamoDbRateLimiter,
  limiterCallBounds,
} from './rate-limit/dynamodb-limiter';
import { readRateLimitSettings } from './rate-limit/settings';

const settings = readRateLimitSettings(process.env);

export const handler = composeLambdaHandler({
  limits: {
    limiter: new DynamoDbRateLimiter({
      // The production bounds, unless a test against an emulator set a longer deadline.
      client: createLimiterDynamoDbClient(limiterCallBounds(settings.deadlineMs)),
      tableName: settings.tableName,
      deadlineMs: settings.deadlineMs,
    }),
    defaultLimit: settings.defaultLimit,
    failure: settings.failure,
  },
});
