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
} from '../../../../../lambda/payment/rate-limit/dynamodb-limiter';

const dynamodb = mockClient(DynamoDBClient);
const TABLE = 'PaymentApi-RateLimits';
const NOW = 1_800_000_000_000;
/** 10 requests a second: one every 100 ms; a burst of 5: 400 ms of tolerance. */
const LIMIT = { perSecond: 10, burst: 5 };

function conflict(tat: number | undefined): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(tat === undefined ? {} : { Item: { pk: { S: 'shop' }, tat: { N: String(tat) } } }),
  });
}

function written(tat: number) {
  return { Attributes: { tat: { N: String(tat) }, expiresAt: { N: '1' } } };
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

  it("starts an idle app's counter from now with one conditional write, and says what is left", async () => {
    dynamodb.on(UpdateItemCommand).resolves(written(NOW + 100));

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'accepted', remaining: 4, resetSeconds: 1 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
    expect(sent(0)).toMatchObject({
      TableName: TABLE,
      Key: { pk: { S: 'shop' } },
      UpdateExpression: 'SET tat = :next, expiresAt = :expiresAt',
      ConditionExpression: 'attribute_not_exists(tat) OR tat < :now',
      ExpressionAttributeValues: {
        ':next': { N: String(NOW + 100) },
        ':now': { N: String(NOW) },
        ':expiresAt': { N: String(NOW / 1000 + 3_600) },
      },
      ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
    });
  });

  it('adds one interval to a busy counter, on condition that it leaves room for the request', async () => {
    dynamodb
      .on(UpdateItemCommand)
      .resolvesOnce(written(NOW + 100))
      .resolves(written(NOW + 200));
    const shared = limiter();

    await shared.check('shop', LIMIT);
    const second = await shared.check('shop', LIMIT);

    expect(second).toEqual({ kind: 'accepted', remaining: 3, resetSeconds: 1 });
    expect(sent(1)).toMatchObject({
      UpdateExpression: 'SET tat = tat + :interval, expiresAt = :expiresAt',
      ConditionExpression: 'tat BETWEEN :now AND :latest',
      ExpressionAttributeValues: {
        ':interval': { N: '100' },
        ':now': { N: String(NOW) },
        ':latest': { N: String(NOW + 400) },
      },
    });
  });

  it('refuses without a call what the counter it last saw already refuses', async () => {
    // Another environment has filled the bucket: the conditional write fails and DynamoDB says how full it is.
    dynamodb.on(UpdateItemCommand).rejects(conflict(NOW + 500));
    const shared = limiter();

    const first = await shared.check('shop', LIMIT);
    const second = await shared.check('shop', LIMIT);

    expect(first).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(second).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
  });

  it('takes the other branch when another environment moved the counter since this one saw it', async () => {
    // Guessed idle, but the counter is busy (with room left): the second write adds an interval.
    dynamodb
      .on(UpdateItemCommand)
      .rejectsOnce(conflict(NOW + 200))
      .resolves(written(NOW + 300));

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'accepted', remaining: 2, resetSeconds: 1 });
    expect(sent(1).ConditionExpression).toBe('tat BETWEEN :now AND :latest');
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 2);
  });

  it('gives up after three lost writes, refusing for a second rather than writing on', async () => {
    let tat = NOW;
    dynamodb.on(UpdateItemCommand).callsFake(() => {
      // Every time it looks, another environment has just moved the counter (with room left).
      tat += 50;
      throw conflict(tat);
    });

    const decision = await limiter().check('shop', LIMIT);

    expect(decision).toEqual({ kind: 'limited', retryAfterSeconds: 1 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 3);
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

  it('spreads an app over several counter items above 500 requests a second, each with an equal share', async () => {
    dynamodb.on(UpdateItemCommand).resolves(written(NOW + 2.5));

    const decision = await limiter(
      () => NOW,
      () => 0.5,
    ).check('busy', { perSecond: 1_200, burst: 1_200 });

    expect(counterShards({ perSecond: 1_200, burst: 1_200 })).toEqual({
      count: 3,
      share: { perSecond: 400, burst: 400 },
    });
    expect(sent(0).Key).toEqual({ pk: { S: 'busy#1' } });
    expect(decision).toMatchObject({ kind: 'accepted', remaining: 399 * 3 });
  });
});
