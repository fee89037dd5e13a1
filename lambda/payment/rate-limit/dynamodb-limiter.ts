import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClientConfig,
} from '@aws-sdk/client-dynamodb';
import { addCallDeadline, boundedClientConfig, type CallBounds } from '../../../shared/aws/bounded-client';
import { errorName } from '../../../shared/errors';
import { describeError } from '../../../shared/logger';
import { raceWithTimeout } from '../../../shared/timeout';
import { COUNTER_TABLE } from './counter-table';
import { LIMITER_WORST_ADDED_MS, wholeSeconds, type LimitDecision, type RateLimiter } from './limiter';
import { windowAt, type LimitWindow, type RateLimit } from './window';

/**
 * Bounds on each DynamoDB call of the limiter. In-region UpdateItem answers in a few milliseconds; an attempt that
 * has heard nothing for 65 ms is abandoned and retried once, 10 ms later. One call ends within 140 ms.
 */
export const LIMITER_CALL_BOUNDS: CallBounds = {
  maxAttempts: 2,
  connectionTimeoutMs: 60,
  attemptTimeoutMs: 65,
  retryDelayMs: 10,
  callDeadlineMs: 140,
};

/**
 * LIMITER_CALL_BOUNDS for a whole-check deadline other than production's LIMITER_WORST_ADDED_MS (set only by tests
 * against an emulator, RATE_LIMIT_DEADLINE_MS): every time stretched in proportion, so the calls keep their share of
 * the deadline. Without it an emulator slower than 65 ms a call would still fail open, however long the deadline.
 */
export function limiterCallBounds(deadlineMs: number): CallBounds {
  if (deadlineMs === LIMITER_WORST_ADDED_MS) return LIMITER_CALL_BOUNDS;
  const stretch = (ms: number): number => Math.max(1, Math.round((ms * deadlineMs) / LIMITER_WORST_ADDED_MS));
  const { retryDelayMs } = LIMITER_CALL_BOUNDS;
  return {
    maxAttempts: LIMITER_CALL_BOUNDS.maxAttempts,
    connectionTimeoutMs: stretch(LIMITER_CALL_BOUNDS.connectionTimeoutMs),
    attemptTimeoutMs: stretch(LIMITER_CALL_BOUNDS.attemptTimeoutMs),
    ...(retryDelayMs === undefined ? {} : { retryDelayMs: stretch(retryDelayMs) }),
    callDeadlineMs: stretch(LIMITER_CALL_BOUNDS.callDeadlineMs),
  };
}

/**
 * One item takes about 1,000 writes a second (DynamoDB's per-partition limit), and a window's count is one item. An
 * app whose limit is above this many requests a second is counted on several items per window, each admitting an
 * equal share, so that no item takes more than half of what a partition allows; failed writes (one per execution
 * environment and window, once the window is full) count against it too.
 */
export const REQUESTS_PER_SECOND_PER_ITEM = 500;

/** Counter items outlive their window by this much, then DynamoDB's TTL removes them. */
const ITEM_LINGER_SECONDS = 600;

export interface DynamoDbRateLimiterOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
  /** Picks one of an app's counter items; injectable for tests. Default Math.random. */
  readonly random?: () => number;
  /** The most the limiter may add to a request, every call included. Default LIMITER_WORST_ADDED_MS. */
  readonly deadlineMs?: number;
}

/**
 * A DynamoDB client for the limiter, every call bounded. Region, endpoint and credentials come from `config` or,
 * when absent, the SDK's usual sources (in Lambda: the function's environment).
 */
export function createLimiterDynamoDbClient(
  bounds: CallBounds = LIMITER_CALL_BOUNDS,
  config: Omit<DynamoDBClientConfig, 'maxAttempts' | 'requestHandler' | 'retryStrategy'> = {},
): DynamoDBClient {
  const client = new DynamoDBClient({ ...config, ...boundedClientConfig(bounds) });
  addCallDeadline(client, bounds.callDeadlineMs);
  return client;
}

/** How many items an app's window is spread over, and what each admits (shares differ by at most one). */
export function counterShards(limit: RateLimit): {
  readonly count: number;
  readonly capacities: readonly number[];
} {
  const count = Math.min(limit.burst, Math.max(1, Math.ceil(limit.perSecond / REQUESTS_PER_SECOND_PER_ITEM)));
  const base = Math.floor(limit.burst / count);
  const extra = limit.burst % count;
  return { count, capacities: Array.from({ length: count }, (_, shard) => base + (shard < extra ? 1 : 0)) };
}

function numberAttribute(item: Record<string, AttributeValue> | undefined, name: string): number | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
}

/**
 * The limit shared by every execution environment: one count per app and window (windows aligned on the epoch:
 * window.ts) in DynamoDB, raised by a conditional `ADD`, so no two environments can admit the same slot. Exactly one
 * call per request, at most: an accepted request costs one write; a refused one costs one write the first time this
 * environment finds the window full, and none after that, since a full window stays full.
 */
export class DynamoDbRateLimiter implements RateLimiter {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly deadlineMs: number;
  /** Counter item key (without the window) → the latest window this environment found full. */
  private readonly fullWindow = new Map<string, number>();

  constructor(options: DynamoDbRateLimiterOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.deadlineMs = options.deadlineMs ?? LIMITER_WORST_ADDED_MS;
  }

  async check(appId: string, limit: RateLimit): Promise<LimitDecision> {
    try {
      return await raceWithTimeout(this.decide(appId, limit), this.deadlineMs, (): LimitDecision => ({
        kind: 'unavailable',
        error: `TimeoutError: no decision within ${this.deadlineMs} ms`,
      }));
    } catch (error) {
      return { kind: 'unavailable', error: describeError(error) };
    }
  }

  private async decide(appId: string, limit: RateLimit): Promise<LimitDecision> {
    const now = this.now();
    const window = windowAt(limit, now);
    const { count, capacities } = counterShards(limit);
    const shard = count === 1 ? undefined : Math.floor(this.random() * count);
    const counter = shard === undefined ? appId : `${appId}#${shard}`;
    const capacity = capacities[shard ?? 0] ?? window.capacity;
    const secondsLeft = wholeSeconds(window.endMs - now);
    if (this.fullWindow.get(counter) === window.index)
      return { kind: 'limited', retryAfterSeconds: secondsLeft };

    const used = await this.increment(counter, window, capacity);
    if (used === undefined) {
      this.fullWindow.set(counter, window.index);
      return { kind: 'limited', retryAfterSeconds: secondsLeft };
    }
    // What the app may still make at once in this window: this item's share, times the shares.
    return { kind: 'accepted', remaining: (capacity - used) * count, resetSeconds: secondsLeft };
  }

  /** Counts one request in the window's item, if it has room; the new count, or undefined when it is full. */
  private async increment(
    counter: string,
    window: LimitWindow,
    capacity: number,
  ): Promise<number | undefined> {
    try {
      const output = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { [COUNTER_TABLE.partitionKey]: { S: `${counter}#${window.index}` } },
          UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
          ExpressionAttributeNames: { '#used': COUNTER_TABLE.counter, '#expiresAt': COUNTER_TABLE.expiresAt },
          ExpressionAttributeValues: {
            ':one': { N: '1' },
            ':capacity': { N: String(capacity) },
            ':expiresAt': { N: String(Math.ceil(window.endMs / 1000) + ITEM_LINGER_SECONDS) },
          },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const used = numberAttribute(output.Attributes, COUNTER_TABLE.counter);
      if (used === undefined) throw new Error('UpdateItem returned no count');
      return used;
    } catch (error) {
      // By name as well: an error built in another realm (a test's) is still this one.
      if (
        error instanceof ConditionalCheckFailedException ||
        errorName(error) === 'ConditionalCheckFailedException'
      ) {
        return undefined;
      }
      throw error;
    }
  }
}
