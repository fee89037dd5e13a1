import {
  DEFAULT_KEYS_URL,
  keysUrlProblem,
  readScanningSettings,
} from '../../../../lambda/secret-scanning/settings';

const REGISTRY = { KEYS_SECRET_ID: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:keys-AbCdEf' };

describe('keysUrlProblem', () => {
  it.each([
    DEFAULT_KEYS_URL,
    'https://keys.example.com/github.json',
    'http://127.0.0.1:8080/keys',
    'http://[::1]:9/k',
    'http://localhost/k',
  ])('accepts %s', (url) => {
    expect(keysUrlProblem(url)).toBeUndefined();
  });

  it.each([
    [
      'plain http to a host that is not loopback',
      'http://api.github.com/meta/public_keys/secret_scanning',
      'must use https (plain http only to a loopback address, for tests)',
    ],
    [
      'another scheme',
      'ftp://127.0.0.1/keys',
      'must use https (plain http only to a loopback address, for tests)',
    ],
    ['a relative path', '/meta/public_keys', 'must be an absolute URL'],
    ['credentials in the URL', 'https://user:pass@example.com/keys', 'must not carry credentials'],
  ])('refuses %s in one line that does not repeat it', (_case, url, problem) => {
    expect(keysUrlProblem(url)).toBe(problem);
  });
});

describe('readScanningSettings', () => {
  it("defaults to GitHub's keys, revocation and the default prefix", () => {
    expect(readScanningSettings(REGISTRY)).toMatchObject({
      keysUrl: DEFAULT_KEYS_URL,
      action: 'revoke',
      keyPrefix: 'pay',
      logLevel: 'info',
    });
  });

  it.each([
    [
      { SECRET_SCANNING_KEYS_URL: 'http://example.com/keys' },
      'SECRET_SCANNING_KEYS_URL must use https (plain http only to a loopback address, for tests)',
    ],
    [{ SECRET_SCANNING_ACTION: 'delete' }, 'SECRET_SCANNING_ACTION must be one of revoke, report'],
    [{ KEY_PREFIX: 'Pay-' }, 'KEY_PREFIX must be 2 to 16 characters of a-z, 0-9 and _'],
  ])('fails the start on %j', (env, message) => {
    expect(() => readScanningSettings({ ...REGISTRY, ...env })).toThrow(message);
  });
});
