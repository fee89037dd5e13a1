import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import {
  counterShards,
  DynamoDbRateLimiter,
  LIMITER_CALL_BOUNDS,
  limiterCallBounds,
} from '../../../../../lambda/payment/rate-limit/dynamodb-limiter';
import { LIMITER_WORST_ADDED_MS } from '../../../../../lambda/payment/rate-limit/limiter';

const dynamodb = mockClient(DynamoDBClient);
const TABLE = 'PaymentApi-RateLimits';
/** 10 requests a second in bursts of 5: windows of 500 ms, 5 requests each. */
const LIMIT = { perSecond: 10, burst: 5 };
/** 200 ms into window 3,600,000,000 of that limit. */
const WINDOW = 3_600_000_000;
const NOW = WINDOW * 500 + 200;

function full(): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });
}

function counted(used: number) {
  return { Attributes: { used: { N: String(used) }, expiresAt: { N: '1' } } };
}

function limiter(now = (): number => NOW, random = (): number => 0) {
  return new DynamoDbRateLimiter({ client: new DynamoDBClient({}), tableName: TABLE, now, random });
}

function sent(index: number): UpdateItemCommandInput {
  const call = dynamodb.commandCalls(UpdateItemCommand)[index];
  if (call === undefined) throw new Error(`no UpdateItem #${index}`);
  return call.args[0].input;
}

describe('DynamoDbRateLimiter', () => {
  beforeEach(() => {
    dynamodb.reset();
  });

  it("counts a request in the app's item for the window with one conditional write, and says what is left", async () => {
    dynamodb.on(UpdateItemCommand).resolves(counted(2));

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'accepted', remaining: 3, resetSeconds: 1 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
    expect(sent(0)).toEqual({
      TableName: TABLE,
      Key: { pk: { S: `shop#${WINDOW}` } },
      UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
      ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
      ExpressionAttributeNames: { '#used': 'used', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: {
        ':one': { N: '1' },
        ':capacity': { N: '5' },
        // The window's end, in seconds, plus 10 minutes.
        ':expiresAt': { N: String(Math.ceil(((WINDOW + 1) * 500) / 1000) + 600) },
      },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('refuses once the window is full, then refuses the rest of that window without a call', async () => {
    dynamodb.on(UpdateItemCommand).rejects(full());
    const shared = limiter();

    const first = await shared.check('shop', LIMIT);
    const second = await shared.check('shop', LIMIT);

    expect(first).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(second).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
  });

  it('asks again in the next window, in its own item', async () => {
    dynamodb.on(UpdateItemCommand).rejectsOnce(full()).resolves(counted(1));
    let now = NOW;
    const shared = limiter(() => now);

    await shared.check('shop', LIMIT);
    now += 300;
    const nextWindow = await shared.check('shop', LIMIT);

    expect(nextWindow).toEqual({ kind: 'accepted', remaining: 4, resetSeconds: 1 });
    expect(sent(1).Key).toEqual({ pk: { S: `shop#${WINDOW + 1}` } });
  });

  it('keeps what it knows of one app apart from another', async () => {
    dynamodb.on(UpdateItemCommand).rejectsOnce(full()).resolves(counted(1));
    const shared = limiter();

    await shared.check('shop', LIMIT);
    const other = await shared.check('other', LIMIT);

    expect(other).toMatchObject({ kind: 'accepted' });
    expect(sent(1).Key).toEqual({ pk: { S: `other#${WINDOW}` } });
  });

  it('says when to retry in whole seconds, rounded up: a slow limit has long windows', async () => {
    dynamodb.on(UpdateItemCommand).rejects(full());
    // One request every 4 s: windows of 4 s; 1.5 s in, 2.5 s are left.
    const slow = { perSecond: 0.25, burst: 1 };

    const decision = await limiter(() => 1_800_000_001_500).check('shop', slow);

    expect(decision).toEqual({ kind: 'limited', retryAfterSeconds: 3 });
  });

  it.each([
    [
      'throttling',
      Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ThrottlingException' }),
    ],
    [
      'access denied',
      Object.assign(new Error('not authorized to perform: dynamodb:UpdateItem'), {
        name: 'AccessDeniedException',
      }),
    ],
    ['a dropped connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('says it is unavailable on %s, for the caller to fail open or closed', async (_label, error) => {
    dynamodb.on(UpdateItemCommand).rejects(error);

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'unavailable', error: `${error.name}: ${error.message}` });
  });

  it('says it is unavailable when DynamoDB answers without the count', async () => {
    dynamodb.on(UpdateItemCommand).resolves({});

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'unavailable', error: 'Error: UpdateItem returned no count' });
  });

  it('says it is unavailable once its deadline has passed, whatever DynamoDB is doing', async () => {
    dynamodb.on(UpdateItemCommand).callsFake(() => new Promise(() => undefined));
    const bounded = new DynamoDbRateLimiter({
      client: new DynamoDBClient({}),
      tableName: TABLE,
      now: () => NOW,
      deadlineMs: 20,
    });

    await expect(bounded.check('shop', LIMIT)).resolves.toEqual({
      kind: 'unavailable',
      error: 'TimeoutError: no decision within 20 ms',
    });
  });

  it('spreads an app over several items per window above 500 requests a second, each with its share', async () => {
    dynamodb.on(UpdateItemCommand).resolves(counted(1));
    const busy = { perSecond: 1_200, burst: 1_201 };

    const decision = await limiter(
      () => NOW,
      () => 0.5,
    ).check('busy', busy);

    expect(counterShards(busy)).toEqual({ count: 3, capacities: [401, 400, 400] });
    expect(sent(0).Key?.['pk']?.S).toMatch(/^busy#1#\d+$/);
    expect(sent(0).ExpressionAttributeValues?.[':capacity']).toEqual({ N: '400' });
    expect(decision).toMatchObject({ kind: 'accepted', remaining: 399 * 3 });
  });
});

describe('counterShards', () => {
  it('keeps an app on one item up to 500 a second, and never makes a share of nothing', () => {
    expect(counterShards({ perSecond: 500, burst: 500 })).toEqual({ count: 1, capacities: [500] });
    expect(counterShards({ perSecond: 1_000, burst: 1_000 }).count).toBe(2);
    expect(counterShards({ perSecond: 10_000, burst: 10_000 }).count).toBe(20);
    expect(counterShards({ perSecond: 10_000, burst: 3 })).toEqual({ count: 3, capacities: [1, 1, 1] });
  });
});

describe('limiterCallBounds', () => {
  it("is production's bounds at production's deadline", () => {
    expect(limiterCallBounds(LIMITER_WORST_ADDED_MS)).toBe(LIMITER_CALL_BOUNDS);
  });

  it('stretches every time in proportion for a longer deadline, keeping the attempts', () => {
    expect(limiterCallBounds(LIMITER_WORST_ADDED_MS * 10)).toEqual({
      maxAttempts: LIMITER_CALL_BOUNDS.maxAttempts,
      connectionTimeoutMs: LIMITER_CALL_BOUNDS.connectionTimeoutMs * 10,
      attemptTimeoutMs: LIMITER_CALL_BOUNDS.attemptTimeoutMs * 10,
      retryDelayMs: (LIMITER_CALL_BOUNDS.retryDelayMs ?? 0) * 10,
      callDeadlineMs: LIMITER_CALL_BOUNDS.callDeadlineMs * 10,
    });
  });

  it('keeps one call, a retry included, within the whole check', () => {
    const { attemptTimeoutMs, retryDelayMs = 0, maxAttempts, callDeadlineMs } = LIMITER_CALL_BOUNDS;
    expect(attemptTimeoutMs * maxAttempts + retryDelayMs).toBeLessThanOrEqual(callDeadlineMs);
    expect(callDeadlineMs).toBeLessThanOrEqual(LIMITER_WORST_ADDED_MS);
  });
});
