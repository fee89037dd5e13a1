import { AWS_JSON_SERVICES } from '../../../shared/aws/aws-environment';
import {
  AwsJsonClient,
  type AttemptBounds,
  type AwsJsonClientOptions,
} from '../../../shared/aws/aws-json-client';
import { AttemptError } from '../../../shared/aws/attempt-errors';
import { errorCode, errorName } from '../../../shared/errors';
import { describeError } from '../../../shared/logger';
import type { CounterIncrement, CounterStore, IncrementOutcome } from './counter-store';
import { COUNTER_TABLE } from './counter-table';

/**
 * How the limiter's DynamoDB client makes its one attempt: never sent again, since a write whose answer was lost may
 * have landed (counter-store.ts). In-region UpdateItem answers in a few milliseconds; a connection not made within
 * 50 ms was never sent, and the limiter may send it once more within its budget. No socket timer: the limiter's
 * budget (the signal of each increment) is the attempt's only other bound.
 */
export const LIMITER_ATTEMPTS: AttemptBounds = {
  maxAttempts: 1,
  connectionTimeoutMs: 50,
};

/**
 * The limiter's DynamoDB client (the small client, shared/aws/aws-json-client.ts), one attempt per call. Region,
 * endpoint and credentials come from `access`: the Lambda's environment, or the local server's.
 */
export function createLimiterDynamoDbClient(
  access: Pick<AwsJsonClientOptions, 'target' | 'credentials' | 'transport'>,
): AwsJsonClient {
  return new AwsJsonClient({ service: AWS_JSON_SERVICES.dynamoDb, bounds: LIMITER_ATTEMPTS, ...access });
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
 * was refused (4xx: nothing written) or may have been applied (5xx); a connection never made (refused, not made
 * within its time-out, or the budget ran out before it was) means nothing was sent; anything else (a time-out, a
 * reset, the budget running out after sending) came after sending, so the write may have landed.
 */
export function outcomeOfError(error: unknown): IncrementOutcome {
  const name = errorName(error) ?? '';
  const described = describeError(error);
  if (name === 'ConditionalCheckFailedException') return { kind: 'full' };
  if (THROTTLING_ERRORS.has(name)) return { kind: 'throttled', error: described };
  if (NOT_CONNECTED_CODES.has(errorCode(error) ?? '') || (error instanceof AttemptError && !error.sent)) {
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
 * `used < capacity`, with the item's TTL, sent once (one attempt, never resent: `idempotent: false`), within the
 * caller's budget (`signal`).
 */
export class DynamoDbCounterStore implements CounterStore {
  private readonly client: AwsJsonClient;
  private readonly tableName: string;

  constructor(options: DynamoDbCounterStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
  }

  async increment(request: CounterIncrement): Promise<IncrementOutcome> {
    try {
      return await this.send(request);
    } catch (error) {
      return outcomeOfError(error);
    }
  }

  private async send(request: CounterIncrement): Promise<IncrementOutcome> {
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
      { idempotent: false, signal: request.signal },
    );
    const used = numberAttribute(output.Attributes, COUNTER_TABLE.counter);
    if (used === undefined) {
      return { kind: 'failed', landed: 'maybe', error: 'Error: UpdateItem returned no count' };
    }
    return { kind: 'counted', used };
  }
}
