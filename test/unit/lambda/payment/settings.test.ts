import {
  readKeyCacheSettings,
  readKeyExpiryWarningMs,
  readLambdaSettings,
} from '../../../../lambda/payment/settings';

describe('readLambdaSettings', () => {
  const secretId = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api-keys-AbCdEf';

  it('uses one secret, a 60 s TTL, 15 min staleness and info logs by default', () => {
    expect(readLambdaSettings({ KEYS_SECRET_ID: secretId })).toEqual({
      registry: { shards: 1, shardIds: [secretId] },
      ttlMs: 60_000,
      maxStaleMs: 900_000,
      logLevel: 'info',
      serviceName: 'PaymentApi',
      metricsNamespace: 'PaymentApi',
      keyFormat: { prefix: 'pay', legacyKeys: true },
    });
  });

  it('reads the registry, TTL, staleness and log level from the environment', () => {
    const settings = readLambdaSettings({
      KEYS_SECRET_ID: secretId,
      KEY_SHARDS: '3',
      KEY_SHARDS_PREVIOUS: '2',
      KEY_SHARD_NAME_PREFIX: 'payment-api/PaymentApi-staging/keys/',
      KEY_CACHE_TTL_SECONDS: '5',
      KEY_MAX_STALE_SECONDS: '0',
      LOG_LEVEL: 'DEBUG',
      SERVICE_NAME: 'PaymentApi-staging',
      METRICS_NAMESPACE: 'Payments/Staging',
      KEY_PREFIX: 'acme_stg',
      LEGACY_KEYS: 'false',
    });

    expect(settings).toEqual({
      registry: {
        shards: 3,
        previousShards: 2,
        shardIds: [
          secretId,
          'payment-api/PaymentApi-staging/keys/shard-1',
          'payment-api/PaymentApi-staging/keys/shard-2',
        ],
      },
      ttlMs: 5_000,
      maxStaleMs: 0,
      logLevel: 'debug',
      serviceName: 'PaymentApi-staging',
      metricsNamespace: 'Payments/Staging',
      keyFormat: { prefix: 'acme_stg', legacyKeys: false },
    });
  });

  it.each([
    ['DEBUG', 'warn', 'debug'],
    ['TRACE', 'info', 'debug'],
    ['WARN', 'debug', 'warn'],
    ['FATAL', 'info', 'error'],
  ])("follows Lambda's application log level %s over LOG_LEVEL=%s", (lambdaLevel, logLevel, expected) => {
    const settings = readLambdaSettings({
      KEYS_SECRET_ID: secretId,
      LOG_LEVEL: logLevel,
      AWS_LAMBDA_LOG_LEVEL: lambdaLevel,
    });

    expect(settings.logLevel).toBe(expected);
  });

  const prefixRule = (value: string): string =>
    `KEY_PREFIX must be 2 to 16 characters of a-z, 0-9 and _, got "${value}"`;
  const paykRule = (value: string): string =>
    `KEY_PREFIX must not be "payk" or start with "payk_": legacy keys (payk_...) would all be refused as malformed, got "${value}"`;
  const logLevelRule = (value: string): string =>
    `LOG_LEVEL must be one of debug, info, warn, error, got "${value}"`;

  it.each<[Record<string, string>, string]>([
    [{ SERVICE_NAME: 'a b' }, 'SERVICE_NAME must be 1 to 255 visible ASCII characters, got "a b"'],
    [{ KEY_PREFIX: 'P' }, prefixRule('P')],
    [{ KEY_PREFIX: 'pay-k' }, prefixRule('pay-k')],
    [{ KEY_PREFIX: 'payk' }, paykRule('payk')],
    [{ KEY_PREFIX: 'payk_x' }, paykRule('payk_x')],
    [{ LEGACY_KEYS: 'no' }, 'LEGACY_KEYS must be true or false, got "no"'],
    // Refused, instead of logging at another level.
    [{ LOG_LEVEL: 'verbose' }, logLevelRule('verbose')],
    [{ LOG_LEVEL: 'trace' }, logLevelRule('trace')],
    [{ LOG_LEVEL: 'inf' }, logLevelRule('inf')],
  ])('refuses to start with %j, in one line', (env, message) => {
    expect(() => readLambdaSettings({ KEYS_SECRET_ID: secretId, ...env })).toThrow(message);
  });

  it.each(['-1', '1.5', 'ten', '60s', '0', '3601', ' 60'])(
    'refuses a TTL of %j, naming the variable',
    (value) => {
      expect(() => readKeyCacheSettings({ KEY_CACHE_TTL_SECONDS: value })).toThrow(
        `KEY_CACHE_TTL_SECONDS must be a whole number of seconds from 1 to 3600, got "${value}"`,
      );
    },
  );

  it.each(['-5', '86401', '15m'])('refuses a staleness bound of %j, naming the variable', (value) => {
    expect(() => readKeyCacheSettings({ KEY_MAX_STALE_SECONDS: value })).toThrow(
      `KEY_MAX_STALE_SECONDS must be a whole number of seconds from 0 to 86400, got "${value}"`,
    );
  });

  it.each(['0', '366', '14d', '1.5', '-1'])(
    'refuses an expiry warning of %j days, naming the variable',
    (value) => {
      expect(() => readKeyExpiryWarningMs({ KEY_EXPIRY_WARNING_DAYS: value })).toThrow(
        `KEY_EXPIRY_WARNING_DAYS must be a whole number of days from 1 to 365, got "${value}"`,
      );
    },
  );

  it.each([
    ['1', 86_400_000],
    ['365', 365 * 86_400_000],
    ['', 14 * 86_400_000],
  ])('accepts an expiry warning of %j days, a bound the stack accepts (empty: 14)', (value, ms) => {
    expect(readKeyExpiryWarningMs({ KEY_EXPIRY_WARNING_DAYS: value })).toBe(ms);
  });

  it('accepts the bounds the stack accepts', () => {
    expect(readKeyCacheSettings({ KEY_CACHE_TTL_SECONDS: '3600', KEY_MAX_STALE_SECONDS: '86400' })).toEqual({
      ttlMs: 3_600_000,
      maxStaleMs: 86_400_000,
    });
    expect(readKeyCacheSettings({ KEY_CACHE_TTL_SECONDS: '1', KEY_MAX_STALE_SECONDS: '0' })).toEqual({
      ttlMs: 1_000,
      maxStaleMs: 0,
    });
  });
});
