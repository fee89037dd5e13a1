import { LIMITER_ATTEMPTS } from '../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { fakeAwsService } from '../../../support/fake-aws';
import {
  createLocalLimiterClient,
  createLocalRateLimits,
  limiterClientSettings,
} from '../../../../tools/local-server/rate-limits';

const STATIC_KEYS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'example-secret' };
const LIMIT = { perSecond: 0.001, burst: 2 };

describe('limiterClientSettings', () => {
  it("reads DynamoDB's own endpoint variable before AWS_ENDPOINT_URL", () => {
    const env = { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:2' };

    expect(limiterClientSettings(env).endpoint).toBe('http://127.0.0.1:2');
  });
});

describe('createLocalLimiterClient', () => {
  it("is configured from the environment it is given, with the Lambda's connect timer, and sends once", async () => {
    const dynamoDb = fakeAwsService();
    dynamoDb.on('UpdateItem').rejects(Object.assign(new Error('connect ECONNRESET'), { code: 'ECONNRESET' }));
    const client = createLocalLimiterClient(
      { ...STATIC_KEYS, AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:8000' },
      dynamoDb.transport,
    );

    await expect(
      client.call(
        'UpdateItem',
        { TableName: 't' },
        { idempotent: false, signal: AbortSignal.timeout(1_000) },
      ),
    ).rejects.toThrow('ECONNRESET');

    const [attempt] = dynamoDb.attempts;
    expect(dynamoDb.attempts).toHaveLength(LIMITER_ATTEMPTS.maxAttempts);
    expect(attempt?.url.href).toBe('http://127.0.0.1:8000/');
    expect(attempt?.headers.Authorization).toMatch(
      /Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/dynamodb\/aws4_request/,
    );
    expect([attempt?.connectionTimeoutMs, attempt?.socketTimeoutMs]).toEqual([
      LIMITER_ATTEMPTS.connectionTimeoutMs,
      undefined,
    ]);
  });
});

describe('createLocalRateLimits', () => {
  const dynamoDb = fakeAwsService();
  beforeEach(() => {
    dynamoDb.reset();
  });

  it('gives the handler no limiter when limits are off', () => {
    expect(createLocalRateLimits({ kind: 'off' }, {})).toBeUndefined();
  });

  it('counts in memory: the burst, then a refusal, with the default limit', async () => {
    const limits = createLocalRateLimits({ kind: 'memory', defaultLimit: LIMIT }, {});

    const decisions = [
      await limits?.limiter.check('shop', LIMIT),
      await limits?.limiter.check('shop', LIMIT),
      await limits?.limiter.check('shop', LIMIT),
    ];

    expect(limits?.defaultLimit).toEqual(LIMIT);
    expect(decisions.map((decision) => decision?.kind)).toEqual(['accepted', 'accepted', 'limited']);
    expect(dynamoDb.calls('UpdateItem')).toHaveLength(0);
  });

  it("gives each check the budget it is given (RATE_LIMIT_DEADLINE_MS), not production's", async () => {
    dynamoDb.on('UpdateItem').callsFake(() => new Promise(() => undefined));
    const limits = createLocalRateLimits(
      { kind: 'dynamodb', defaultLimit: LIMIT, tableName: 'limits', failure: 'open', budgetMs: 250 },
      { ...STATIC_KEYS, AWS_REGION: 'eu-west-1' },
      dynamoDb.transport,
    );
    const started = performance.now();

    const decision = await limits?.limiter.check('shop', LIMIT);

    expect(decision?.kind).toBe('unavailable');
    expect(performance.now() - started).toBeGreaterThanOrEqual(240);
  });

  it('counts in the DynamoDB table it is given, with the failure mode it is given', async () => {
    dynamoDb.on('UpdateItem').resolves({ Attributes: { used: { N: '1' } } });
    const limits = createLocalRateLimits(
      {
        kind: 'dynamodb',
        defaultLimit: LIMIT,
        tableName: 'PaymentApi-RateLimits',
        failure: 'closed',
        budgetMs: 150,
      },
      { ...STATIC_KEYS, AWS_REGION: 'eu-west-1' },
      dynamoDb.transport,
    );

    const decision = await limits?.limiter.check('shop', LIMIT);

    expect(decision?.kind).toBe('accepted');
    expect(limits?.failure).toBe('closed');
    const [call] = dynamoDb.calls('UpdateItem');
    expect(call?.TableName).toBe('PaymentApi-RateLimits');
    // The app's item for the current window of 2,000 s (2 requests at 0.001 a second).
    expect(call?.Key).toEqual({ pk: { S: expect.stringMatching(/^shop#\d+$/) as unknown } });
  });
});
