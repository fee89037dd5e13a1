import {
  DynamoDBClient,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { addCallDeadline, boundedClientConfig, type CallBounds } from '../../../shared/aws/bounded-client';
import { errorCode, errorMessage, errorName } from '../../../shared/errors';
import { describeError } from '../../../shared/logger';
import { raceWithTimeout } from '../../../shared/timeout';
import type { CounterIncrement, CounterStore, IncrementOutcome } from './counter-store';
import { COUNTER_TABLE } from './counter-table';
import { LIMITER_WORST_ADDED_MS } from './limiter';

/**
 * Bounds on the limiter's DynamoDB client. One attempt: the SDK never retries the conditional write, since a write
 * whose answer was lost may have landed (counter-store.ts). In-region UpdateItem answers in a few milliseconds; the
 * attempt may take up to 140 ms (a TCP connection 50 ms of it), so the whole check stays within
 * LIMITER_WORST_ADDED_MS (150 ms) with room to spare. Each call is also cut at the time the limiter has left for it
 * (CounterIncrement.withinMs).
 */
export const LIMITER_CALL_BOUNDS: CallBounds = {
  maxAttempts: 1,
  connectionTimeoutMs: 50,
  attemptTimeoutMs: 140,
  callDeadlineMs: 145,
};

/**
 * LIMITER_CALL_BOUNDS for a whole-check deadline other than production's LIMITER_WORST_ADDED_MS (set only by tests
 * against an emulator, RATE_LIMIT_DEADLINE_MS): every time stretched in proportion, so the call keeps its share of
 * the deadline. Without it an emulator slower than 140 ms a call would fail every check, however long the deadline.
 */
export function limiterCallBounds(deadlineMs: number): CallBounds {
  if (deadlineMs === LIMITER_WORST_ADDED_MS) return LIMITER_CALL_BOUNDS;
  const stretch = (ms: number): number => Math.max(1, Math.round((ms * deadlineMs) / LIMITER_WORST_ADDED_MS));
  return {
    maxAttempts: LIMITER_CALL_BOUNDS.maxAttempts,
    connectionTimeoutMs: stretch(LIMITER_CALL_BOUNDS.connectionTimeoutMs),
    attemptTimeoutMs: stretch(LIMITER_CALL_BOUNDS.attemptTimeoutMs),
    callDeadlineMs: stretch(LIMITER_CALL_BOUNDS.callDeadlineMs),
  };
}

/**
 * A DynamoDB client for the limiter, bounded by `bounds` (one attempt). Region, endpoint and credentials come from
 * `config` or, when absent, the SDK's usual sources (in Lambda: the function's environment).
 */
export function createLimiterDynamoDbClient(
  bounds: CallBounds = LIMITER_CALL_BOUNDS,
  config: Omit<DynamoDBClientConfig, 'maxAttempts' | 'requestHandler' | 'retryStrategy'> = {},
): DynamoDBClient {
  const client = new DynamoDBClient({ ...config, ...boundedClientConfig(bounds) });
  addCallDeadline(client, bounds.callDeadlineMs);
  return client;
}

/** DynamoDB's answers for a write refused for its rate: a hot partition, or the table's or account's limit. */
const THROTTLING_ERRORS = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** Node's codes for a connection that was never made: nothing was sent. */
const NOT_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/** The SDK's handler names a connection not made in time this way (@smithy/node-http-handler). */
const CONNECTION_NOT_ESTABLISHED = 'did not establish a connection';

/**
 * What a failed UpdateItem call means for the count. A service's own answer (its `$fault`) tells whether the write
 * was refused (4xx: nothing written) or may have been applied (5xx); a connection never made means nothing was
 * sent; anything else (a time-out, a reset, an abort) came after sending, so the write may have landed.
 */
export function outcomeOfError(error: unknown): IncrementOutcome {
  const name = errorName(error) ?? '';
  const described = describeError(error);
  if (name === 'ConditionalCheckFailedException') return { kind: 'full' };
  if (THROTTLING_ERRORS.has(name)) return { kind: 'throttled', error: described };
  if (
    NOT_CONNECTED_CODES.has(errorCode(error) ?? '') ||
    errorMessage(error)?.includes(CONNECTION_NOT_ESTABLISHED)
  ) {
    return { kind: 'unsent', error: described };
  }
  const fault = (error as { readonly $fault?: unknown } | null)?.$fault;
  return { kind: 'failed', landed: fault === 'client' ? 'no' : 'maybe', error: described };
}

function numberAttribute(item: Record<string, AttributeValue> | undefined, name: string): number | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
}

export interface DynamoDbCounterStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/**
 * The counter store in DynamoDB: one conditional `UpdateItem` per increment, `ADD used 1` under the condition
 * `used < capacity`, with the item's TTL, sent once (the client makes one attempt) and cut at `withinMs`.
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;

  constructor(options: DynamoDbCounterStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async increment(request: CounterIncrement): Promise<IncrementOutcome> {
    const abort = new AbortController();
    const lost = (): IncrementOutcome => {
      abort.abort();
      return {
        kind: 'failed',
        landed: 'maybe',
        error: `TimeoutError: no answer within ${request.withinMs} ms`,
      };
    };
    try {
      return await raceWithTimeout(this.send(request, abort.signal), request.withinMs, lost);
    } catch (error) {
      return outcomeOfError(error);
    }
  }

  private async send(request: CounterIncrement, abortSignal: AbortSignal): Promise<IncrementOutcome> {
    const output = await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: { [COUNTER_TABLE.partitionKey]: { S: request.key } },
        UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
        ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
        ExpressionAttributeNames: { '#used': COUNTER_TABLE.counter, '#expiresAt': COUNTER_TABLE.expiresAt },
        ExpressionAttributeValues: {
          ':one': { N: '1' },
          ':capacity': { N: String(request.capacity) },
          ':expiresAt': { N: String(request.expiresAtSeconds) },
        },
        ReturnValues: 'UPDATED_NEW',
      }),
      { abortSignal },
    );
    const used = numberAttribute(output.Attributes, COUNTER_TABLE.counter);
    if (used === undefined) {
      return { kind: 'failed', landed: 'maybe', error: 'Error: UpdateItem returned no count' };
    }
    return { kind: 'counted', used };
  }
}
