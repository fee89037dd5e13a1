import { SecretsManagerClient, type SecretsManagerClientConfig } from '@aws-sdk/client-secrets-manager';
import { ConfiguredRetryStrategy } from '@smithy/core/retry';
import type { MiddlewareStack, RetryStrategyV2 } from '@smithy/types';
import { raceWithTimeout } from '../timeout';

/**
 * How long one Secrets Manager call may take, and how it ends when the service does not answer. Every client
 * of this project (payment Lambda, rotation Lambda, key CLI, local server) is built by createSecretsManagerClient
 * from one of these, so no call can hang.
 */
export interface CallBounds {
  /** Attempts per call, the first included (the SDK's standard retry strategy spaces them). */
  readonly maxAttempts: number;
  /** One attempt's TCP connect. */
  readonly connectionTimeoutMs: number;
  /**
   * One attempt, from sending the request to the response's headers (connect included); also the longest
   * silence allowed while the body arrives.
   */
  readonly attemptTimeoutMs: number;
  /**
   * A fixed pause before each retry, throttling answers included, where the caller has its own spacing of calls
   * (the key cache) and cannot afford the SDK's back-off (up to 1 s after a throttling answer, 2026 defaults).
   * Absent: the SDK's standard back-off.
   */
  readonly retryDelayMs?: number;
  /** The whole call, every attempt and the back-off between them included: the caller never waits longer. */
  readonly callDeadlineMs: number;
}

/** The error a call fails with at its deadline; named as the SDK names its own time-outs. */
export class CallDeadlineError extends Error {
  override readonly name = 'TimeoutError';

  constructor(deadlineMs: number) {
    super(`the AWS call did not complete within ${deadlineMs} ms`);
  }
}

/** Settles `work` as it settles, or rejects with CallDeadlineError at `deadlineMs`, whichever comes first. */
function withinDeadline<T>(work: Promise<T>, deadlineMs: number): Promise<T> {
  return raceWithTimeout(work, deadlineMs, (): never => {
    throw new CallDeadlineError(deadlineMs);
  });
}

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
