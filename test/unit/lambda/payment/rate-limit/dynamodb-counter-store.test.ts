import {
  createLimiterDynamoDbClient,
  DynamoDbCounterStore,
  LIMITER_CALL_BOUNDS,
  limiterCallBounds,
  outcomeOfError,
} from '../../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { LIMITER_WORST_ADDED_MS } from '../../../../../lambda/payment/rate-limit/limiter';
import { AWS_JSON_SERVICES } from '../../../../../shared/aws/aws-environment';
import { AwsServiceError } from '../../../../../shared/aws/aws-json-client';
import { CallDeadlineError } from '../../../../../shared/aws/call-bounds';
import { AttemptTimeoutError } from '../../../../../shared/aws/http-transport';
import { awsError, clientOver, fakeAwsService, FAKE_CREDENTIALS } from '../../../../support/fake-aws';

/** DynamoDB in memory, behind the limiter's own client (shared/aws/aws-json-client.ts): what goes over the wire. */
const dynamodb = fakeAwsService();
const TABLE = 'PaymentApi-RateLimits';
const REQUEST = { key: 'shop#3600000000', capacity: 5, expiresAtSeconds: 1_800_000_600, withinMs: 100 };

function store(): DynamoDbCounterStore {
  return new DynamoDbCounterStore({
    client: clientOver(dynamodb, AWS_JSON_SERVICES.dynamoDb, LIMITER_CALL_BOUNDS),
    tableName: TABLE,
  });
}

function sent(index: number): Record<string, unknown> {
  const call = dynamodb.calls('UpdateItem')[index];
  if (call === undefined) throw new Error(`no UpdateItem #${index}`);
  return call;
}

describe('DynamoDbCounterStore', () => {
  beforeEach(() => {
    dynamodb.reset();
  });

  it('counts with one conditional ADD on the item, under its capacity, with its TTL, and returns the new count', async () => {
    dynamodb.on('UpdateItem').resolves({ Attributes: { used: { N: '2' }, expiresAt: { N: '1' } } });

    const outcome = await store().increment(REQUEST);

    expect(outcome).toEqual({ kind: 'counted', used: 2 });
    expect(dynamodb.calls('UpdateItem')).toHaveLength(1);
    expect(dynamodb.attempts[0]?.headers).toMatchObject({
      'Content-Type': 'application/x-amz-json-1.0',
      'X-Amz-Target': 'DynamoDB_20120810.UpdateItem',
    });
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
      .on('UpdateItem')
      .rejects(
        awsError(
          'com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException',
          'The conditional request failed',
        ),
      );

    expect(await store().increment(REQUEST)).toEqual({ kind: 'full' });
  });

  it('says throttled, not failed, when DynamoDB refuses the write for its rate', async () => {
    dynamodb
      .on('UpdateItem')
      .rejects(
        awsError(
          'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
          'Throughput exceeds the current capacity of your table or index.',
        ),
      );

    expect(await store().increment(REQUEST)).toEqual({
      kind: 'throttled',
      error:
        'ProvisionedThroughputExceededException: Throughput exceeds the current capacity of your table or index.',
    });
  });

  it('may have landed when DynamoDB answers without the count', async () => {
    dynamodb.on('UpdateItem').resolves({});

    expect(await store().increment(REQUEST)).toEqual({
      kind: 'failed',
      landed: 'maybe',
      error: 'Error: UpdateItem returned no count',
    });
  });

  it('settles within its time, whatever the call does, and says the write may have landed', async () => {
    dynamodb.on('UpdateItem').callsFake(() => new Promise(() => undefined));
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
      new AttemptTimeoutError('did not establish a connection within the 50 ms connection time-out', false),
      'unsent',
      undefined,
    ],
    [
      'no answer in time: sent, may have landed',
      new AttemptTimeoutError('no answer within the 140 ms attempt time-out', true),
      'failed',
      'maybe',
    ],
    ['the call deadline: may have landed', new CallDeadlineError(145), 'failed', 'maybe'],
    [
      'a reset mid-answer: may have landed',
      Object.assign(new Error('aborted'), { code: 'ECONNRESET' }),
      'failed',
      'maybe',
    ],
    ['a 5xx: may have landed', new AwsServiceError('InternalServerError', 'oops', 500), 'failed', 'maybe'],
    [
      'AccessDenied: refused, nothing written',
      new AwsServiceError('AccessDeniedException', 'denied', 400),
      'failed',
      'no',
    ],
    [
      'ResourceNotFound: refused, nothing written',
      new AwsServiceError('ResourceNotFoundException', 'no table', 400),
      'failed',
      'no',
    ],
    [
      'ThrottlingException: throttled',
      new AwsServiceError('ThrottlingException', 'slow', 400),
      'throttled',
      undefined,
    ],
    [
      'RequestLimitExceeded: throttled',
      new AwsServiceError('RequestLimitExceeded', 'slow', 400),
      'throttled',
      undefined,
    ],
    [
      'ConditionalCheckFailed: full',
      new AwsServiceError('ConditionalCheckFailedException', 'full', 400),
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
  beforeEach(() => {
    dynamodb.reset();
  });

  it.each([
    ['a 500', awsError('InternalServerError', 'oops', 500)],
    ['a throttle', awsError('ThrottlingException', 'slow')],
    ['a reset connection', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ])('makes one attempt after %s: the conditional write is never sent again', async (_label, failure) => {
    dynamodb.on('UpdateItem').rejects(failure);
    const client = createLimiterDynamoDbClient({
      target: { url: new URL('https://dynamodb.eu-west-1.amazonaws.com/'), region: 'eu-west-1' },
      credentials: () => Promise.resolve(FAKE_CREDENTIALS),
      transport: dynamodb.transport,
    });

    await expect(
      client.call('UpdateItem', { TableName: TABLE }, { idempotent: false }),
    ).rejects.toBeDefined();

    expect(dynamodb.calls('UpdateItem')).toHaveLength(1);
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
