import {
  GetSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { KeyCache, KeysUnavailableError } from '../../lambda/keys/key-cache';
import { sha256 } from '../../lambda/keys/key-material';
import { secretsManagerSource } from '../../lambda/keys/secrets-manager-source';
import { captureLogs, type CapturedLogs } from '../support/capture-logger';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../support/keys';

const SECRET_ID = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api-keys-AbCdEf';
const TTL_MS = 60_000;
const MAX_STALE_MS = 15 * 60_000;
const BACKOFF_MS = 5_000;

const secretsManager = mockClient(SecretsManagerClient);

function throttled(): SecretsManagerServiceException {
  return new SecretsManagerServiceException({
    name: 'ThrottlingException',
    $fault: 'client',
    message: 'Rate exceeded',
    $metadata: {},
  });
}

describe('KeyCache over Secrets Manager', () => {
  let logs: CapturedLogs;
  let cache: KeyCache;

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-21T12:00:00Z') });
    secretsManager.reset();
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: SECRET_STRING, VersionId: 'v1' });
    logs = captureLogs();
    cache = new KeyCache({
      source: secretsManagerSource(SECRET_ID, new SecretsManagerClient({ region: 'eu-west-1' })),
      logger: logs.logger,
      ttlMs: TTL_MS,
      maxStaleMs: MAX_STALE_MS,
      retryBackoffMs: BACKOFF_MS,
    });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  it('asks for the AWSCURRENT stage explicitly', async () => {
    await cache.getKeyring();

    expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, {
      SecretId: SECRET_ID,
      VersionStage: 'AWSCURRENT',
    });
  });

  it('returns the cached keys until the TTL expires, then fetches once more', async () => {
    // Arrange
    const first = await cache.getKeyring();

    // Act
    jest.advanceTimersByTime(TTL_MS - 1);
    const withinTtl = await cache.getKeyring();
    jest.advanceTimersByTime(1);
    await cache.getKeyring();

    // Assert
    expect(withinTtl).toBe(first);
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('lets concurrent callers share one fetch in flight', async () => {
    let release: (value: { SecretString: string }) => void = () => undefined;
    secretsManager.on(GetSecretValueCommand).callsFake(() => new Promise((resolve) => (release = resolve)));

    const pending = Array.from({ length: 25 }, () => cache.getKeyring());
    await jest.advanceTimersByTimeAsync(0);
    release({ SecretString: SECRET_STRING });
    const keyrings = await Promise.all(pending);

    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(new Set(keyrings).size).toBe(1);
  });

  it('shares the fetch started by warm() with the first request', async () => {
    cache.warm();
    await cache.getKeyring();

    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
  });

  it('picks up a change made in Secrets Manager once the TTL has passed', async () => {
    await cache.getKeyring();
    secretsManager
      .on(GetSecretValueCommand)
      .resolves({ SecretString: JSON.stringify({ partner: PARTNER_KEY }) });

    const beforeTtl = await cache.getKeyring();
    jest.advanceTimersByTime(TTL_MS);
    const afterTtl = await cache.getKeyring();

    expect([...beforeTtl.keys()]).toEqual(['demo', 'partner', 'hashed']);
    expect([...afterTtl.keys()]).toEqual(['partner']);
  });

  it('serves the last good keys when a refresh fails, and logs it', async () => {
    const good = await cache.getKeyring();
    secretsManager.on(GetSecretValueCommand).rejects(throttled());

    jest.advanceTimersByTime(TTL_MS);
    const served = await cache.getKeyring();

    expect(served).toBe(good);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'keys refresh failed',
        error: 'ThrottlingException: Rate exceeded',
        servingStaleKeys: true,
        staleKeysAgeSeconds: 60,
      }),
    );
  });

  it('waits out the back-off after a failed refresh instead of retrying on every request', async () => {
    await cache.getKeyring();
    secretsManager.on(GetSecretValueCommand).rejects(throttled());
    jest.advanceTimersByTime(TTL_MS);
    await cache.getKeyring();

    jest.advanceTimersByTime(BACKOFF_MS - 1);
    await cache.getKeyring();
    await cache.getKeyring();
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);

    jest.advanceTimersByTime(1);
    await cache.getKeyring();
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 3);
  });

  it('retries within a second when keys have never loaded, answering unavailable meanwhile', async () => {
    secretsManager.on(GetSecretValueCommand).rejects(throttled());
    await expect(cache.getKeyring()).rejects.toThrow(KeysUnavailableError);
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: SECRET_STRING });

    jest.advanceTimersByTime(999);
    await expect(cache.getKeyring()).rejects.toThrow(KeysUnavailableError);
    jest.advanceTimersByTime(1);

    await expect(cache.getKeyring()).resolves.toBeInstanceOf(Map);
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 2);
  });

  it('gives up on stale keys after TTL + maximum staleness', async () => {
    await cache.getKeyring();
    secretsManager.on(GetSecretValueCommand).rejects(throttled());

    jest.advanceTimersByTime(TTL_MS + MAX_STALE_MS - 1);
    await expect(cache.getKeyring()).resolves.toBeInstanceOf(Map);
    jest.advanceTimersByTime(BACKOFF_MS);

    await expect(cache.getKeyring()).rejects.toThrow(
      new KeysUnavailableError('keys are older than the staleness bound and cannot be refreshed'),
    );
  });

  it('recovers as soon as a refresh succeeds again', async () => {
    await cache.getKeyring();
    secretsManager.on(GetSecretValueCommand).rejects(throttled());
    jest.advanceTimersByTime(TTL_MS + MAX_STALE_MS + BACKOFF_MS);
    await expect(cache.getKeyring()).rejects.toThrow(KeysUnavailableError);

    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: SECRET_STRING });
    jest.advanceTimersByTime(BACKOFF_MS);

    await expect(cache.getKeyring()).resolves.toBeInstanceOf(Map);
  });

  it.each([
    ['access is denied', new Error('not authorized to perform secretsmanager:GetSecretValue')],
    ['the secret does not exist', new ResourceNotFoundException({ message: 'not found', $metadata: {} })],
    ['Secrets Manager throttles', throttled()],
  ])('is unavailable when keys have never loaded and %s', async (_label, error) => {
    secretsManager.on(GetSecretValueCommand).rejects(error);

    await expect(cache.getKeyring()).rejects.toThrow(new KeysUnavailableError('keys have never loaded'));
  });

  it('is unavailable when the only version of the secret is malformed', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: 'not json' });

    await expect(cache.getKeyring()).rejects.toThrow(KeysUnavailableError);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        message: 'keys refresh failed',
        error: 'MalformedSecretError: secret is not valid JSON',
      }),
    );
  });

  it('is unavailable for a binary secret, which has no SecretString', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretBinary: new Uint8Array([1, 2, 3]) });

    await expect(cache.getKeyring()).rejects.toThrow(KeysUnavailableError);
  });

  it('keeps the good keys when the secret is edited into something malformed', async () => {
    const good = await cache.getKeyring();
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: JSON.stringify({ demo: 'short' }) });

    jest.advanceTimersByTime(TTL_MS);

    await expect(cache.getKeyring()).resolves.toBe(good);
  });

  it('logs each malformed entry by app and reason, and never a key or the secret', async () => {
    const brokenSecret = JSON.stringify({ demo: [DEMO_KEY, 'sha256:1234'], partner: PARTNER_KEY });
    secretsManager.on(GetSecretValueCommand).resolves({ SecretString: brokenSecret });

    const keyring = await cache.getKeyring();

    expect(keyring.get('demo')?.map((key) => key.digest)).toEqual([sha256(DEMO_KEY)]);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'malformed key entry ignored',
        entryPosition: 1,
        appId: 'demo',
        keyPosition: 2,
        reason: 'sha256: form needs exactly 64 hex characters',
      }),
    );
    const everything = logs.lines.join('\n');
    expect(everything).not.toContain(DEMO_KEY);
    expect(everything).not.toContain(PARTNER_KEY);
    expect(everything).not.toContain('sha256:1234');
  });
});
