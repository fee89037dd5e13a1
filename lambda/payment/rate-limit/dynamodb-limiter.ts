import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  UpdateItemCommand,
  type AttributeValue,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { addCallDeadline, boundedClientConfig, type CallBounds } from '../../../shared/aws/bounded-client';
import { errorName } from '../../../shared/errors';
import { describeError } from '../../../shared/logger';
import { raceWithTimeout } from '../../../shared/timeout';
import { decide, intervalMs, toleranceMs, type RateLimit } from './gcra';
import { LIMITER_WORST_ADDED_MS, wholeSeconds, type LimitDecision, type RateLimiter } from './limiter';

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
 * One counter item takes about 1,000 writes a second (DynamoDB's per-partition limit). An app whose limit is above
 * this many requests a second is counted on several items, each holding an equal share of its rate and burst, so
 * that no item takes more than half of what a partition allows.
 */
export const REQUESTS_PER_SECOND_PER_ITEM = 500;

/** After this many conditional writes lost to other environments, the request is refused for a second. */
const MAX_WRITES = 3;

/** Counter items outlive their last request by this much, then DynamoDB's TTL removes them. */
const ITEM_LINGER_SECONDS = 3_600;

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

/** A DynamoDB client for the limiter: region and credentials from the Lambda environment, every call bounded. */
export function createLimiterDynamoDbClient(bounds: CallBounds = LIMITER_CALL_BOUNDS): DynamoDBClient {
  const client = new DynamoDBClient(boundedClientConfig(bounds));
  addCallDeadline(client, bounds.callDeadlineMs);
  return client;
}

/** How many items an app's counter is spread over, and the share of the limit each holds. */
export function counterShards(limit: RateLimit): { readonly count: number; readonly share: RateLimit } {
  const count = Math.max(1, Math.ceil(limit.perSecond / REQUESTS_PER_SECOND_PER_ITEM));
  return {
    count,
    share: { perSecond: limit.perSecond / count, burst: Math.max(1, Math.ceil(limit.burst / count)) },
  };
}

function numberAttribute(item: Record<string, AttributeValue> | undefined, name: string): number | undefined {
  const value = item?.[name]?.N;
  return value === undefined ? undefined : Number(value);
}

type Write =
  | { readonly kind: 'written'; readonly tat: number }
  /** The condition did not hold: another environment moved the counter, or the app is over its limit. */
  | { readonly kind: 'conflict'; readonly tat: number | undefined };

/**
 * The limit shared by every execution environment: one GCRA counter per app (or a few, above
 * REQUESTS_PER_SECOND_PER_ITEM) in DynamoDB, moved by a conditional UpdateItem, so no two environments can accept
 * the same slot. Each environment remembers the last counter value it saw: it only ever grows, so a request that
 * value already refuses is refused without a call, and the branch of the update (a busy bucket adds one interval to
 * the counter; an idle one starts it from now) is guessed from it. Accepted requests cost one call, two when the
 * guess was wrong; refused ones mostly none.
 */
export class DynamoDbRateLimiter implements RateLimiter {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly deadlineMs: number;
  /** Counter item key → the highest TAT this environment has seen for it: a lower bound of the real one. */
  private readonly seen = new Map<string, number>();

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
    const { count, share } = counterShards(limit);
    const key = count === 1 ? appId : `${appId}#${Math.floor(this.random() * count)}`;
    let known = this.seen.get(key);
    for (let write = 0; write < MAX_WRITES; write++) {
      const now = this.now();
      const decision = decide(known, now, share);
      if (!decision.accepted) {
        return { kind: 'limited', retryAfterSeconds: wholeSeconds(decision.retryAfterMs) };
      }
      const busy = known !== undefined && known >= now;
      const outcome = await this.write(key, share, now, busy);
      if (outcome.kind === 'written') {
        this.remember(key, outcome.tat);
        // How many more would be accepted at this instant: the next one, and those after it; across all the
        // app's counter items, each holding an equal share.
        const next = decide(outcome.tat, now, share);
        return {
          kind: 'accepted',
          remaining: next.accepted ? (next.remaining + 1) * count : 0,
          resetSeconds: wholeSeconds(outcome.tat - now),
        };
      }
      // Lost to another environment, or over the limit: what DynamoDB holds now decides the next step.
      known = outcome.tat;
      if (known !== undefined) this.remember(key, known);
    }
    return { kind: 'limited', retryAfterSeconds: 1 };
  }

  private remember(key: string, tat: number): void {
    const previous = this.seen.get(key);
    if (previous === undefined || tat > previous) this.seen.set(key, tat);
  }

  /**
   * Busy (the counter is at or past `now`): add one interval, if the counter still leaves room for this request.
   * Idle (the counter is behind `now`, or there is none): start it from `now`, if it is still behind.
   */
  private async write(key: string, limit: RateLimit, now: number, busy: boolean): Promise<Write> {
    const interval = intervalMs(limit);
    const expiresAt = { N: String(Math.ceil(now / 1000) + ITEM_LINGER_SECONDS) };
    const update: Pick<
      UpdateItemCommandInput,
      'UpdateExpression' | 'ConditionExpression' | 'ExpressionAttributeValues'
    > = busy
      ? {
          UpdateExpression: 'SET tat = tat + :interval, expiresAt = :expiresAt',
          ConditionExpression: 'tat BETWEEN :now AND :latest',
          ExpressionAttributeValues: {
            ':interval': { N: String(interval) },
            ':now': { N: String(now) },
            ':latest': { N: String(now + toleranceMs(limit)) },
            ':expiresAt': expiresAt,
          },
        }
      : {
          UpdateExpression: 'SET tat = :next, expiresAt = :expiresAt',
          ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
          ExpressionAttributeValues: {
            ':next': { N: String(now + interval) },
            ':now': { N: String(now) },
            ':expiresAt': expiresAt,
          },
        };
    try {
      const output = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: { pk: { S: key } },
          ...update,
          ReturnValues: 'UPDATED_NEW',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      const tat = numberAttribute(output.Attributes, 'tat');
      if (tat === undefined) throw new Error('UpdateItem returned no counter');
      return { kind: 'written', tat };
    } catch (error) {
      // By name as well: an error built in another realm (a test's) is still this one.
      if (
        error instanceof ConditionalCheckFailedException ||
        errorName(error) === 'ConditionalCheckFailedException'
      ) {
        return {
          kind: 'conflict',
          tat: numberAttribute((error as ConditionalCheckFailedException).Item, 'tat'),
        };
      }
      throw error;
    }
  }
}
