import {
  createLimiterDynamoDbClient,
  DynamoDbCounterStore,
  LIMITER_ATTEMPTS,
  outcomeOfError,
} from '../../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { AWS_JSON_SERVICES } from '../../../../../shared/aws/aws-environment';
import { AwsServiceError } from '../../../../../shared/aws/aws-json-client';
import { abortedAttempt, AttemptError } from '../../../../../shared/aws/attempt-errors';
import { awsError, clientOver, fakeAwsService, FAKE_CREDENTIALS } from '../../../../support/fake-aws';
import { startStallingServer } from '../../../../support/stalling-server';
import { startUnacceptingServer } from '../../../../support/unaccepting-server';

/** DynamoDB in memory, behind the limiter's own client (shared/aws/aws-json-client.ts): what goes over the wire. */
const dynamodb = fakeAwsService();
const TABLE = 'PaymentApi-RateLimits';
const ITEM = { key: 'shop#3600000000', capacity: 5, expiresAtSeconds: 1_800_000_600 };
/** An increment with the caller's budget: one signal per increment, as the limiter makes one per check. */
const increment = (budgetMs = 100) => ({ ...ITEM, signal: AbortSignal.timeout(budgetMs) });

function store(): DynamoDbCounterStore {
  return new DynamoDbCounterStore({
    client: clientOver(dynamodb, AWS_JSON_SERVICES.dynamoDb, LIMITER_ATTEMPTS),
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

    const outcome = await store().increment(increment());

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

    expect(await store().increment(increment())).toEqual({ kind: 'full' });
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

    expect(await store().increment(increment())).toEqual({
      kind: 'throttled',
      error:
        'ProvisionedThroughputExceededException: Throughput exceeds the current capacity of your table or index.',
    });
  });

  it('may have landed when DynamoDB answers without the count', async () => {
    dynamodb.on('UpdateItem').resolves({});

    expect(await store().increment(increment())).toEqual({
      kind: 'failed',
      landed: 'maybe',
      error: 'Error: UpdateItem returned no count',
    });
  });

  it("settles when the caller's budget runs out, whatever the call does, and says the write may have landed", async () => {
    dynamodb.on('UpdateItem').callsFake(() => new Promise(() => undefined));
    const startedAt = performance.now();

    const outcome = await store().increment(increment(30));

    expect(outcome).toEqual({
      kind: 'failed',
      landed: 'maybe',
      error: 'TimeoutError: time budget ran out after sending',
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
      new AttemptError('no connection within the 50 ms connection time-out', false),
      'unsent',
      undefined,
    ],
    [
      'a silent connection: sent, may have landed',
      new AttemptError('silent for the 140 ms socket time-out', true),
      'failed',
      'maybe',
    ],
    [
      'the budget run out before the connection was made: never sent',
      abortedAttempt(new DOMException('timed out', 'TimeoutError'), false),
      'unsent',
      undefined,
    ],
    [
      'the budget run out after sending: may have landed',
      abortedAttempt(new DOMException('timed out', 'TimeoutError'), true),
      'failed',
      'maybe',
    ],
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
      client.call(
        'UpdateItem',
        { TableName: TABLE },
        { idempotent: false, signal: AbortSignal.timeout(1_000) },
      ),
    ).rejects.toBeDefined();

    expect(dynamodb.calls('UpdateItem')).toHaveLength(1);
  });
});

describe("the limiter client over Node's HTTP stack: sent or never sent", () => {
  const over = (endpoint: string): DynamoDbCounterStore =>
    new DynamoDbCounterStore({
      client: createLimiterDynamoDbClient({
        target: { url: new URL(endpoint), region: 'eu-west-1' },
        credentials: () => Promise.resolve(FAKE_CREDENTIALS),
      }),
      tableName: TABLE,
    });

  it(`never sent: a connection not made within ${LIMITER_ATTEMPTS.connectionTimeoutMs} ms (its timer seen firing), whatever the budget left`, async () => {
    const host = await startUnacceptingServer();
    try {
      const outcome = await over(host.endpoint).increment(increment(5_000));

      expect(outcome).toEqual({
        kind: 'unsent',
        error: `TimeoutError: no connection within the ${LIMITER_ATTEMPTS.connectionTimeoutMs} ms connection time-out`,
      });
    } finally {
      await host.close();
    }
  });

  it('may have landed: a store that accepts and never answers, at the budget (no socket timer of its own)', async () => {
    const host = await startStallingServer('silent');
    try {
      const started = performance.now();

      const outcome = await over(host.endpoint).increment(increment(300));

      expect(outcome).toEqual({
        kind: 'failed',
        landed: 'maybe',
        error: 'TimeoutError: time budget ran out after sending',
      });
      expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    } finally {
      await host.close();
    }
  });
});
