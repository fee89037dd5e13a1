import { AWS_JSON_SERVICES } from '../../../shared/aws/aws-environment';
import { AwsJsonClient, type AwsJsonClientOptions } from '../../../shared/aws/aws-json-client';
import type { CallBounds } from '../../../shared/aws/call-bounds';
import { AttemptTimeoutError } from '../../../shared/aws/http-transport';
import { errorCode, errorName } from '../../../shared/errors';
import { describeError } from '../../../shared/logger';
import { raceWithTimeout } from '../../../shared/timeout';
import type { CounterIncrement, CounterStore, IncrementOutcome } from './counter-store';
import { COUNTER_TABLE } from './counter-table';
import { LIMITER_WORST_ADDED_MS } from './limiter';

/**
 * Bounds on the limiter's DynamoDB client. One attempt: the client never sends the conditional write again, since a write
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
 * The limiter's DynamoDB client (the small client, shared/aws/aws-json-client.ts), bounded by `bounds` (one attempt).
 * Region, endpoint and credentials come from `access`: the Lambda's environment, or the local server's.
 */
export function createLimiterDynamoDbClient(
  access: Pick<AwsJsonClientOptions, 'target' | 'credentials' | 'transport'>,
  bounds: CallBounds = LIMITER_CALL_BOUNDS,
): AwsJsonClient {
  return new AwsJsonClient({ service: AWS_JSON_SERVICES.dynamoDb, bounds, ...access });
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

/**
 * What a failed UpdateItem call means for the count. A service's own answer (its `$fault`) tells whether the write
 * was refused (4xx: nothing written) or may have been applied (5xx); a connection never made (refused, or not made
 * within its time-out) means nothing was sent; anything else (a time-out, a reset, an abort) came after sending, so
 * the write may have landed.
 */
export function outcomeOfError(error: unknown): IncrementOutcome {
  const name = errorName(error) ?? '';
  const described = describeError(error);
  if (name === 'ConditionalCheckFailedException') return { kind: 'full' };
  if (THROTTLING_ERRORS.has(name)) return { kind: 'throttled', error: described };
  if (
    NOT_CONNECTED_CODES.has(errorCode(error) ?? '') ||
    (error instanceof AttemptTimeoutError && !error.sent)
  ) {
    return { kind: 'unsent', error: described };
  }
  const fault = (error as { readonly $fault?: unknown } | null)?.$fault;
  return { kind: 'failed', landed: fault === 'client' ? 'no' : 'maybe', error: described };
}

/** A number attribute of DynamoDB's JSON (`{"used": {"N": "2"}}`), or undefined. */
function numberAttribute(item: unknown, name: string): number | undefined {
  if (typeof item !== 'object' || item === null) return undefined;
  const attribute: unknown = (item as Record<string, unknown>)[name];
  if (typeof attribute !== 'object' || attribute === null) return undefined;
  const value: unknown = (attribute as { readonly N?: unknown }).N;
  return typeof value === 'string' && value !== '' && Number.isFinite(Number(value))
    ? Number(value)
    : undefined;
}

export interface DynamoDbCounterStoreOptions {
  readonly client: AwsJsonClient;
  readonly tableName: string;
}

/**
 * The counter store in DynamoDB: one conditional `UpdateItem` per increment, `ADD used 1` under the condition
 * `used < capacity`, with the item's TTL, sent once (one attempt, never resent: `idempotent: false`) and cut at
 * `withinMs`.
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly client: AwsJsonClient;
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
    const output = await this.client.call(
      'UpdateItem',
      {
        TableName: this.tableName,
        Key: { [COUNTER_TABLE.partitionKey]: { S: request.key } },
        // Members in the order of DynamoDB's model, as the SDK writes them: the body is the SDK's, byte for byte.
        ReturnValues: 'UPDATED_NEW',
        UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
        ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
        ExpressionAttributeNames: { '#used': COUNTER_TABLE.counter, '#expiresAt': COUNTER_TABLE.expiresAt },
        ExpressionAttributeValues: {
          ':one': { N: '1' },
          ':capacity': { N: String(request.capacity) },
          ':expiresAt': { N: String(request.expiresAtSeconds) },
        },
      },
      { idempotent: false, signal: abortSignal },
    );
    const used = numberAttribute(output.Attributes, COUNTER_TABLE.counter);
    if (used === undefined) {
      return { kind: 'failed', landed: 'maybe', error: 'Error: UpdateItem returned no count' };
    }
    return { kind: 'counted', used };
  }
}
