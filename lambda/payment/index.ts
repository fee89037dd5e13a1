/**
 * The payment Lambda's entry point without rate limits: nothing of DynamoDB is imported, so the bundle stays as
 * small as before limits existed. With `appRateLimit` the stack builds rate-limited.ts instead.
 */
import { composeLambdaHandler } from './compose';

export const handler = composeLambdaHandler();
