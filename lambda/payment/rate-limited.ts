/**
 * The payment Lambda's entry point with per-app rate limits (`appRateLimit`): the limiter counts in the stack's
 * DynamoDB table, shared by every execution environment. Its client, and the limiter with its breaker and what it
 * knows of each counter, live at module scope, for the execution environment, like the Secrets Manager client;
 * compose.ts builds them once it has read the Lambda's AWS settings.
 */
import { composeLambdaHandler } from './compose';
import { createLimiterDynamoDbClient, DynamoDbCounterStore } from './rate-limit/dynamodb-counter-store';
import { readRateLimitSettings } from './rate-limit/settings';
import { SharedRateLimiter } from './rate-limit/shared-limiter';

const settings = readRateLimitSettings(process.env);

export const handler = composeLambdaHandler({
  limits: (aws) => ({
    limiter: new SharedRateLimiter({
      store: new DynamoDbCounterStore({
        client: createLimiterDynamoDbClient({ target: aws.targets.dynamoDb, credentials: aws.credentials }),
        tableName: settings.tableName,
      }),
      // The production budget, unless a test against an emulator set a longer one.
      budgetMs: settings.budgetMs,
      failure: settings.failure,
    }),
    defaultLimit: settings.defaultLimit,
    failure: settings.failure,
  }),
});
