import { readLocalSettings, readRateLimiting } from '../../../../tools/local-server/local-settings';

describe('readLocalSettings', () => {
  it('defaults to port 3000 on 127.0.0.1, .local/keys.json under the working directory, and the Lambda cache defaults', () => {
    // Act
    const settings = readLocalSettings({}, '/work/project');

    // Assert
    expect(settings).toEqual({
      host: '127.0.0.1',
      port: 3000,
      keys: { kind: 'file', path: '/work/project/.local/keys.json' },
      logLevel: 'info',
      ttlMs: 60_000,
      maxStaleMs: 900_000,
      rateLimiting: { kind: 'off' },
      keyFormat: { prefix: 'pay', legacyKeys: true },
    });
  });

  it.each([
    { keysFile: 'keys.json', expected: '/work/project/keys.json' },
    { keysFile: '../other/keys.json', expected: '/work/other/keys.json' },
    { keysFile: '/etc/payment/keys.json', expected: '/etc/payment/keys.json' },
    { keysFile: '', expected: '/work/project/.local/keys.json' },
  ])('resolves KEYS_FILE=$keysFile to $expected', ({ keysFile, expected }) => {
    // Act
    const settings = readLocalSettings({ KEYS_FILE: keysFile }, '/work/project');

    // Assert
    expect(settings.keys).toEqual({ kind: 'file', path: expected });
  });

  it.each([
    {
      env: { KEYS_SECRET_ID: 'payment-api/keys', KEYS_FILE: 'k.json' },
      keys: { kind: 'secretsManager', secretId: 'payment-api/keys' },
    },
    {
      env: { KEYS_REGISTRY_FILE: '.local/registry/registry.json' },
      keys: { kind: 'registryFile', path: '/w/.local/registry/registry.json' },
    },
    {
      env: { KEYS_REGISTRY: 'payment-api/PaymentApi/keys/registry' },
      keys: { kind: 'registry', manifestId: 'payment-api/PaymentApi/keys/registry' },
    },
    { env: { KEYS_STACK: 'PaymentApi-staging' }, keys: { kind: 'stack', stackName: 'PaymentApi-staging' } },
  ])(
    'reads the keys from $env: Secrets Manager whatever KEYS_FILE says, or a registry of shards',
    ({ env, keys }) => {
      // Act / Assert
      expect(readLocalSettings(env, '/w').keys).toEqual(keys);
    },
  );

  it.each([
    [
      { KEYS_REGISTRY_FILE: 'r.json', KEYS_FILE: 'k.json' },
      'both KEYS_REGISTRY_FILE and KEYS_FILE are set: the keys come from one place, unset all but one',
    ],
    [
      { KEYS_REGISTRY: 'm', KEYS_SECRET_ID: 's' },
      'both KEYS_REGISTRY and KEYS_SECRET_ID are set: the keys come from one place, unset all but one',
    ],
    [
      { KEYS_STACK: 'PaymentApi', KEYS_REGISTRY: 'm', KEYS_FILE: 'k.json' },
      'KEYS_STACK, KEYS_REGISTRY and KEYS_FILE are set: the keys come from one place, unset all but one',
    ],
    [
      { KEYS_STACK: 'payment api' },
      'invalid KEYS_STACK: a stack name is 1 to 128 letters, digits or "-", starting with a letter (or give its ARN)',
    ],
    [
      { KEYS_SECRET_ID: 'payment-api/keys', KEY_SHARDS: '8' },
      "KEY_SHARDS is the Lambda's: point the local server at a registry of shards with KEYS_REGISTRY (its manifest secret), KEYS_STACK or KEYS_REGISTRY_FILE",
    ],
    [
      { KEY_SHARD_NAME_PREFIX: 'payment-api/PaymentApi/keys/' },
      "KEY_SHARD_NAME_PREFIX is the Lambda's: point the local server at a registry of shards with KEYS_REGISTRY (its manifest secret), KEYS_STACK or KEYS_REGISTRY_FILE",
    ],
  ])('refuses %j with one line, rather than serve from one place of two', (env, message) => {
    // Act / Assert
    expect(() => readLocalSettings(env, '/w')).toThrow(message);
  });

  it('reads the key cache, log and key format settings with the Lambda variable names', () => {
    const env = { KEY_CACHE_TTL_SECONDS: '2', KEY_MAX_STALE_SECONDS: '30', LOG_LEVEL: 'debug' };

    expect(readLocalSettings({ ...env, KEY_PREFIX: 'acme', LEGACY_KEYS: 'false' }, '/w')).toMatchObject({
      ttlMs: 2_000,
      maxStaleMs: 30_000,
      logLevel: 'debug',
      keyFormat: { prefix: 'acme', legacyKeys: false },
    });
  });

  it.each([
    { port: '0', expected: 0 },
    { port: '8080', expected: 8080 },
    { port: '65535', expected: 65_535 },
    { port: '', expected: 3000 },
  ])('accepts PORT=$port', ({ port, expected }) => {
    // Act / Assert
    expect(readLocalSettings({ PORT: port }, '/w').port).toBe(expected);
  });

  it.each(['65536', '-1', 'abc', '80.5', ' 80', '123456'])('refuses PORT=%j with a clear message', (port) => {
    // Act / Assert
    expect(() => readLocalSettings({ PORT: port }, '/w')).toThrow(
      `PORT must be a port number from 0 to 65535, got "${port}"`,
    );
  });

  it('refuses LOG_LEVEL=verbose with one line naming the variable, instead of a silent default', () => {
    // Act / Assert
    expect(() => readLocalSettings({ LOG_LEVEL: 'verbose' }, '/w')).toThrow(
      'LOG_LEVEL must be one of debug, info, warn, error, got "verbose"',
    );
  });
});

describe('readRateLimiting', () => {
  const tableArn = 'arn:aws:dynamodb:eu-west-1:123456789012:table/PaymentApi-RateLimits';
  const dynamodb = (perSecond: number, burst: number) => ({
    kind: 'dynamodb',
    defaultLimit: { perSecond, burst },
  });

  it.each<[string, Record<string, string>, object]>([
    ['applies no limit without APP_RATE_LIMIT', { APP_RATE_LIMIT: '' }, { kind: 'off' }],
    [
      "counts in memory with APP_RATE_LIMIT, one second's worth as burst",
      { APP_RATE_LIMIT: '2' },
      { kind: 'memory', defaultLimit: { perSecond: 2, burst: 2 } },
    ],
    [
      'counts in memory with the burst APP_RATE_BURST says',
      { APP_RATE_LIMIT: '0.5', APP_RATE_BURST: '3' },
      { kind: 'memory', defaultLimit: { perSecond: 0.5, burst: 3 } },
    ],
    [
      "counts in DynamoDB with RATE_LIMIT_TABLE, failing local within the Lambda's 150 ms by default",
      { APP_RATE_LIMIT: '20', RATE_LIMIT_TABLE: 'PaymentApi-RateLimits' },
      { ...dynamodb(20, 20), tableName: 'PaymentApi-RateLimits', failure: 'local', budgetMs: 150 },
    ],
    [
      'takes a failure mode and, for tests against an emulator, a longer deadline',
      {
        APP_RATE_LIMIT: '20',
        APP_RATE_BURST: '40',
        RATE_LIMIT_TABLE: tableArn,
        APP_RATE_LIMIT_FAILURE: 'closed',
        RATE_LIMIT_DEADLINE_MS: '10000',
      },
      { ...dynamodb(20, 40), tableName: tableArn, failure: 'closed', budgetMs: 10_000 },
    ],
  ])('%s', (_label, env, rateLimiting) => {
    expect(readRateLimiting(env)).toEqual(rateLimiting);
  });

  it.each([
    [
      { APP_RATE_LIMIT: '10001' },
      'APP_RATE_LIMIT must be a number of requests per second from 0.001 to 10000, got "10001"',
    ],
    [{ RATE_LIMIT_TABLE: 'PaymentApi-RateLimits' }, 'RATE_LIMIT_TABLE needs APP_RATE_LIMIT'],
    [{ APP_RATE_LIMIT_FAILURE: 'closed' }, 'APP_RATE_LIMIT_FAILURE needs APP_RATE_LIMIT'],
    [
      { APP_RATE_LIMIT: '2', APP_RATE_LIMIT_FAILURE: 'closed' },
      'APP_RATE_LIMIT_FAILURE needs RATE_LIMIT_TABLE',
    ],
    [
      { APP_RATE_LIMIT: '2', RATE_LIMIT_DEADLINE_MS: '1000' },
      'RATE_LIMIT_DEADLINE_MS needs RATE_LIMIT_TABLE',
    ],
    [
      { APP_RATE_LIMIT: '2', RATE_LIMIT_TABLE: 'limits', RATE_LIMIT_DEADLINE_MS: '5' },
      'RATE_LIMIT_DEADLINE_MS must be a whole number of milliseconds from 10 to 60000, got "5"',
    ],
    [
      { APP_RATE_LIMIT: '2', RATE_LIMIT_TABLE: 'no spaces allowed' },
      'RATE_LIMIT_TABLE must be a DynamoDB table name (3 to 255 letters, digits, "_", "." or "-") or a table ARN, got "no spaces allowed"',
    ],
    [
      { APP_RATE_LIMIT: '2', RATE_LIMIT_TABLE: 'ab' },
      'RATE_LIMIT_TABLE must be a DynamoDB table name (3 to 255 letters, digits, "_", "." or "-") or a table ARN, got "ab"',
    ],
  ])('refuses %j with one line naming the variable', (env, message) => {
    expect(() => readRateLimiting(env)).toThrow(message);
  });

  it('is read with the other settings, so a bad value stops the server before it listens', () => {
    expect(() => readLocalSettings({ APP_RATE_LIMIT: '-1' }, '/w')).toThrow(
      'APP_RATE_LIMIT must be a number of requests per second from 0.001 to 10000, got "-1"',
    );
  });
});
