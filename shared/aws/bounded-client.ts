import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { MiddlewareStack, RetryStrategyV2 } from '@smithy/types';
import { withinDeadline, type CallBounds } from './call-bounds';

export { CallDeadlineError, type CallBounds } from './call-bounds';

/** What any AWS SDK client needs in its configuration to be bounded by `bounds` (see createSecretsManagerClient). */
export function boundedClientConfig(bounds: CallBounds): {
  readonly maxAttempts: number;
  readonly retryStrategy?: RetryStrategyV2;
  readonly requestHandler: {
    readonly connectionTimeout: number;
    readonly requestTimeout: number;
    readonly throwOnRequestTimeout: true;
    readonly socketTimeout: number;
  };
} {
  return {
    maxAttempts: bounds.maxAttempts,
    ...(bounds.retryDelayMs === undefined
      ? {}
      : { retryStrategy: new ConfiguredRetryStrategy(bounds.maxAttempts, bounds.retryDelayMs) }),
    requestHandler: {
      connectionTimeout: bounds.connectionTimeoutMs,
      requestTimeout: bounds.attemptTimeoutMs,
      throwOnRequestTimeout: true,
      socketTimeout: bounds.attemptTimeoutMs,
    },
  };
}

/** Puts a deadline on every call a client makes (retries and back-off included), whoever calls it. */
export function addCallDeadline<I extends object, O extends object>(
  client: { readonly middlewareStack: MiddlewareStack<I, O> },
  deadlineMs: number,
): void {
  client.middlewareStack.add((next) => (args) => withinDeadline(next(args), deadlineMs), {
    step: 'initialize',
    name: 'paymentApiCallDeadline',
    priority: 'high',
  });
}

/**
 * A Secrets Manager client whose every call is bounded by `bounds`:
 * - `requestTimeout` with `throwOnRequestTimeout`: without that flag the SDK's Node handler only logs a warning
 *   when an attempt passes its time-out and keeps waiting;
 * - `socketTimeout`: a response that stops arriving midway fails too;
 * - a deadline on the whole call (retries and back-off included), as a middleware so that every `send` gets it,
 *   whoever calls.
 * Region, endpoint and credentials come from `config` or, when absent, the SDK's usual sources.
 */
export function createSecretsManagerClient(
  bounds: CallBounds,
  config: Omit<SecretsManagerClientConfig, 'maxAttempts' | 'requestHandler' | 'retryStrategy'> = {},
): SecretsManagerClient {
  const client = new SecretsManagerClient({ ...config, ...boundedClientConfig(bounds) });
  addCallDeadline(client, bounds.callDeadlineMs);
  return client;
}
