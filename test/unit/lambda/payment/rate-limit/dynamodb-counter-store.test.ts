import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  DynamoDBServiceException,
  ProvisionedThroughputExceededException,
  UpdateItemCommand,
  type UpdateItemCommandInput,
} from '@aws-sdk/client-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import {
  createLimiterDynamoDbClient,
  DynamoDbCounterStore,
  LIMITER_CALL_BOUNDS,
  limiterCallBounds,
  outcomeOfError,
} from '../../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { LIMITER_WORST_ADDED_MS } from '../../../../../lambda/payment/rate-limit/limiter';

const dynamodb = mockClient(DynamoDBClient);
const TABLE = 'PaymentApi-RateLimits';
const REQUEST = { key: 'shop#3600000000', capacity: 5, expiresAtSeconds: 1_800_000_600, withinMs: 100 };

function store(): DynamoDbCounterStore {
  return new DynamoDbCounterStore({ client: new DynamoDBClient({}), tableName: TABLE });
}

function sent(index: number): UpdateItemCommandInput {
  const call = dynamodb.commandCalls(UpdateItemCommand)[index];
  if (call === undefined) throw new Error(`no UpdateItem #${index}`);
  return call.args[0].input;
}

function serviceError(name: string, fault: 'client' | 'server'): DynamoDBServiceException {
  return new DynamoDBServiceException({ name, $fault: fault, $metadata: {}, message: `${name} happened` });
}

describe('DynamoDbCounterStore', () => {
  beforeEach(() => {
    dynamodb.reset();
  });

  it('counts with one conditional ADD on the item, under its capacity, with its TTL, and returns the new count', async () => {
    dynamodb.on(UpdateItemCommand).resolves({ Attributes: { used: { N: '2' }, expiresAt: { N: '1' } } });

    const outcome = await store().increment(REQUEST);

    expect(outcome).toEqual({ kind: 'counted', used: 2 });
    expect(dynamodb).toHaveReceivedCommandTimes(UpdateItemCommand, 1);
    expect(sent(0)).toEqual({
      TableName: TABLE,
      Key: { pk: { S: 'shop#3600000000' } },
      UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
      ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
      ExpressionAttributeNames: { '#used': 'used', '#expiresAt': 'expiresAt' },
      ExpressionAttributeValues: {
        ':one': { N: '1' },
        ':capacity': { N: '5' },
        ':expiresAt': { N: '1800000600' },
      },
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it('says full when the condition fails', async () => {
    dynamodb
      .on(UpdateItemCommand)
      .rejects(
        new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} }),
      );

    expect(await store().increment(REQUEST)).toEqual({ kind: 'full' });
  });

  it('says throttled, not failed, when DynamoDB refuses the write for its rate', async () => {
    dynamodb.on(UpdateItemCommand).rejects(
      new ProvisionedThroughputExceededException({
        message: 'Throughput exceeds the current capacity of your table or index.',
        $metadata: {},
      }),
    );

    expect(await store().increment(REQUEST)).toEqual({
      kind: 'throttled',
      error:
        'ProvisionedThroughputExceededException: Throughput exceeds the current capacity of your table or index.',
    });
  });

  it('may have landed when DynamoDB answers without the count', async () => {
    dynamodb.on(UpdateItemCommand).resolves({});

    expect(await store().increment(REQUEST)).toEqual({
      kind: 'failed',
      landed: 'maybe',
      error: 'Error: UpdateItem returned no count',
    });
  });

  it('settles within its time, whatever the call does, and says the write may have landed', async () => {
    dynamodb.on(UpdateItemCommand).callsFake(() => new Promise(() => undefined));
    const startedAt = performance.now();

    const outcome = await store().increment({ ...REQUEST, withinMs: 30 });

    expect(outcome).toEqual({
      kind: 'failed',
      landed: 'maybe',
      error: 'TimeoutError: no answer within 30 ms',
    });
    expect(performance.now() - startedAt).toBeLessThan(1_000);
  });
});

describe('outcomeOfError: what a failed UpdateItem means for the count', () => {
  it.each<[string, unknown, ReturnType<typeof outcomeOfError>['kind'], 'no' | 'maybe' | undefined]>([
    [
      'a refused connection: never sent',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'unsent',
      undefined,
    ],
    [
      'an unknown host: never sent',
      Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' }),
      'unsent',
      undefined,
    ],
    [
      'a connection not made in time: never sent',
      Object.assign(
        new Error(
          '@smithy/node-http-handler - the request socket did not establish a connection with the server within the configured timeout of 50 ms.',
        ),
        { name: 'TimeoutError' },
      ),
      'unsent',
      undefined,
    ],
    [
      'no answer in time: sent, may have landed',
      Object.assign(new Error('a request has exceeded the configured 140 ms requestTimeout'), {
        name: 'TimeoutError',
        code: 'ETIMEDOUT',
      }),
      'failed',
      'maybe',
    ],
    [
      'a reset mid-answer: may have landed',
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
      'failed',
      'maybe',
    ],
    ['a 5xx: may have landed', serviceError('InternalServerError', 'server'), 'failed', 'maybe'],
    [
      'AccessDenied: refused, nothing written',
      serviceError('AccessDeniedException', 'client'),
      'failed',
      'no',
    ],
    [
      'ResourceNotFound: refused, nothing written',
      serviceError('ResourceNotFoundException', 'client'),
      'failed',
      'no',
    ],
    ['ThrottlingException: throttled', serviceError('ThrottlingException', 'client'), 'throttled', undefined],
    [
      'RequestLimitExceeded: throttled',
      serviceError('RequestLimitExceeded', 'client'),
      'throttled',
      undefined,
    ],
    [
      'ConditionalCheckFailed: full',
      serviceError('ConditionalCheckFailedException', 'client'),
      'full',
      undefined,
    ],
  ])('%s', (_label, error, kind, landed) => {
    const outcome = outcomeOfError(error);

    expect(outcome.kind).toBe(kind);
    if (outcome.kind === 'failed') expect(outcome.landed).toBe(landed);
  });
});

describe('the limiter client', () => {
  it('makes one attempt: the SDK never sends a conditional write again', async () => {
    const client = createLimiterDynamoDbClient(LIMITER_CALL_BOUNDS, { region: 'eu-west-1' });

    expect(await client.config.maxAttempts()).toBe(1);
    client.destroy();
  });

  it('keeps its attempt within the whole check', () => {
    const { attemptTimeoutMs, connectionTimeoutMs, callDeadlineMs, maxAttempts } = LIMITER_CALL_BOUNDS;
    expect(maxAttempts).toBe(1);
    expect(connectionTimeoutMs).toBeLessThan(attemptTimeoutMs);
    expect(attemptTimeoutMs).toBeLessThanOrEqual(callDeadlineMs);
    expect(callDeadlineMs).toBeLessThanOrEqual(LIMITER_WORST_ADDED_MS);
  });
});

describe('limiterCallBounds', () => {
  it("is production's bounds at production's deadline", () => {
    expect(limiterCallBounds(LIMITER_WORST_ADDED_MS)).toBe(LIMITER_CALL_BOUNDS);
  });

  it('stretches every time in proportion for a longer deadline, keeping the one attempt', () => {
    expect(limiterCallBounds(LIMITER_WORST_ADDED_MS * 10)).toEqual({
      maxAttempts: 1,
      connectionTimeoutMs: LIMITER_CALL_BOUNDS.connectionTimeoutMs * 10,
      attemptTimeoutMs: LIMITER_CALL_BOUNDS.attemptTimeoutMs * 10,
      callDeadlineMs: LIMITER_CALL_BOUNDS.callDeadlineMs * 10,
    });
  });
});
