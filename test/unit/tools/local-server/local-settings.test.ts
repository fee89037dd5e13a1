import { readLocalSettings } from '../../../../tools/local-server/local-settings';

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

  it('uses Secrets Manager when KEYS_SECRET_ID is set, whatever KEYS_FILE says', () => {
    // Act
    const settings = readLocalSettings({ KEYS_SECRET_ID: 'payment-api/keys', KEYS_FILE: 'k.json' }, '/w');

    // Assert
    expect(settings.keys).toEqual({ kind: 'secretsManager', secretId: 'payment-api/keys' });
  });

  it('reads the key cache and log settings with the Lambda variable names', () => {
    // Act
    const settings = readLocalSettings(
      { KEY_CACHE_TTL_SECONDS: '2', KEY_MAX_STALE_SECONDS: '30', LOG_LEVEL: 'debug' },
      '/w',
    );

    // Assert
    expect(settings).toMatchObject({ ttlMs: 2_000, maxStaleMs: 30_000, logLevel: 'debug' });
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

  it.each([
    ['LOG_LEVEL', 'verbose', 'LOG_LEVEL must be one of debug, info, warn, error, got "verbose"'],
    [
      'KEY_CACHE_TTL_SECONDS',
      '0',
      'KEY_CACHE_TTL_SECONDS must be a whole number of seconds from 1 to 3600, got "0"',
    ],
    [
      'KEY_MAX_STALE_SECONDS',
      'forever',
      'KEY_MAX_STALE_SECONDS must be a whole number of seconds from 0 to 86400, got "forever"',
    ],
  ])(
    'refuses %s=%j with one line naming the variable, instead of a silent default',
    (name, value, message) => {
      // Act / Assert
      expect(() => readLocalSettings({ [name]: value }, '/w')).toThrow(message);
    },
  );
});
