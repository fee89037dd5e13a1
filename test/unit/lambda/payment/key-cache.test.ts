import {
  KeyCache,
  KeysUnavailableError,
  type CurrentKeys,
  type KeyCacheOptions,
  type RefreshedKeys,
} from '../../../../lambda/payment/key-cache';
import { secretsManagerSource } from '../../../../lambda/payment/secrets-manager-source';
import { AWS_JSON_SERVICES } from '../../../../shared/aws/aws-environment';
import { captureLogs, type CapturedLogs } from '../../../support/capture-logger';
import {
  awsError,
  clientOver,
  fakeAwsService,
  type AwsErrorAnswer,
  type ScriptedOutcome,
} from '../../../support/fake-aws';
import { settleTiming } from '../../../support/fake-time';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../../../support/keys';

const SECRET_ID = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api-keys-AbCdEf';
const TTL_MS = 60_000;
const MAX_STALE_MS = 15 * 60_000;
const REFRESH_WAIT_MS = 250;
const STALE_RETRY_MS = 5_000;
const UNAVAILABLE_RETRY_MS = 500;
/** The source's deadline (KEY_FETCH_BUDGET_MS) plus the cache's grace for a fetch frozen with its environment. */
const ABANDON_AFTER_MS = 1_500 + 1_000;

/**
 * Secrets Manager in memory, behind the payment Lambda's own client (one attempt, no bound of its own: the cache's
 * rules count fetches here; the client's retry and bounds have tests of their own).
 */
const secretsManager = fakeAwsService();
const GET = 'GetSecretValue';
const paymentClient = () => clientOver(secretsManager, AWS_JSON_SERVICES.secretsManager);

function throttled(): AwsErrorAnswer {
  return awsError('ThrottlingException', 'Rate exceeded');
}

/** Secrets Manager answering `secretString` after `delayMs` (fake time). */
function answersAfter(delayMs: number, secretString = SECRET_STRING): void {
  secretsManager.on(GET).callsFake(
    () =>
      new Promise((resolve) => {
        setTimeout(() => {
          resolve({ SecretString: secretString });
        }, delayMs);
      }),
  );
}

describe('KeyCache over Secrets Manager', () => {
  let logs: CapturedLogs;
  let cache: KeyCache;
  let refreshes: string[];

  beforeEach(() => {
    jest.useFakeTimers({ now: new Date('2026-11-21T12:00:00Z') });
    secretsManager.reset();
    secretsManager.on(GET).resolves({ SecretString: SECRET_STRING, VersionId: 'v1' });
    logs = captureLogs();
    refreshes = [];
    cache = cacheWith({
      refreshWaitMs: REFRESH_WAIT_MS,
      staleRetryMs: STALE_RETRY_MS,
      unavailableRetryMs: UNAVAILABLE_RETRY_MS,
      observer: {
        refreshSucceeded: () => refreshes.push('succeeded'),
        refreshFailed: () => refreshes.push('failed'),
      },
    });
  });

  afterEach(() => {
    jest.useRealTimers();
  });

  /** A cache over Secrets Manager with the TTL and staleness bound above, logging to this test's lines. */
  function cacheWith(options: Partial<KeyCacheOptions>): KeyCache {
    return new KeyCache({
      source: secretsManagerSource(SECRET_ID, paymentClient()),
      logger: logs.logger,
      ttlMs: TTL_MS,
      maxStaleMs: MAX_STALE_MS,
      ...options,
    });
  }

  describe('while the keys are fresh', () => {
    it('asks for the AWSCURRENT stage explicitly, in one fetch that warm() starts and concurrent callers share', async () => {
      answersAfter(100);

      cache.warm();
      const pending = Array.from({ length: 25 }, () => cache.getKeys());
      await jest.advanceTimersByTimeAsync(100);
      const results = await Promise.all(pending);

      expect(secretsManager.calls(GET)).toEqual([{ SecretId: SECRET_ID, VersionStage: 'AWSCURRENT' }]);
      expect(new Set(results.map((result) => result.keyring)).size).toBe(1);
    });

    it('returns the cached keys until the TTL expires, then fetches once more and picks up a change made in Secrets Manager', async () => {
      const first = await cache.getKeys();
      secretsManager.on(GET).resolves({ SecretString: JSON.stringify({ partner: PARTNER_KEY }) });

      jest.advanceTimersByTime(TTL_MS - 1);
      const withinTtl = await cache.getKeys();
      jest.advanceTimersByTime(1);
      const afterTtl = await cache.getKeys();

      expect(withinTtl).toEqual({ keyring: first.keyring, stale: false });
      expect([...withinTtl.keyring.keys()]).toEqual(['demo', 'partner', 'hashed']);
      expect(afterTtl).toEqual({
        keyring: new Map([['partner', { keys: expect.any(Array) as unknown }]]),
        stale: false,
      });
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });

    it('hands the observer the keyring it loaded and the size of the secret, and logs the size, never the text', async () => {
      const seen: RefreshedKeys[] = [];
      const observed = cacheWith({
        source: { description: 'a test secret', fetchSecretString: () => Promise.resolve(SECRET_STRING) },
        observer: { refreshSucceeded: (refreshed) => seen.push(refreshed), refreshFailed: () => undefined },
      });

      const { keyring } = await observed.getKeys();

      const bytes = Buffer.byteLength(SECRET_STRING, 'utf8');
      expect(seen).toHaveLength(1);
      expect(seen[0]?.keyring).toBe(keyring);
      expect(seen[0]?.secretSize).toMatchObject({ bytes, fillPercent: (bytes / 65_536) * 100, fits: true });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'keys loaded', apps: 3, secretBytes: bytes }),
      );
      expect(logs.lines.join('\n')).not.toContain(DEMO_KEY);
    });
  });

  describe('when a refresh is due and the last good keys are within the staleness bound', () => {
    let good: CurrentKeys;

    beforeEach(async () => {
      good = await cache.getKeys();
      jest.advanceTimersByTime(TTL_MS);
    });

    it('waits for a refresh that answers within the budget and serves its keys', async () => {
      answersAfter(REFRESH_WAIT_MS - 50, JSON.stringify({ partner: PARTNER_KEY }));

      const request = cache.getKeys();
      const tookMs = await settleTiming(request);

      expect(tookMs).toBeLessThan(REFRESH_WAIT_MS);
      expect(await request).toEqual({
        keyring: new Map([['partner', { keys: expect.any(Array) as unknown }]]),
        stale: false,
      });
    });

    it('serves the stale keys once the budget has passed, and the refresh goes on to replace them', async () => {
      answersAfter(3_000, JSON.stringify({ partner: PARTNER_KEY }));

      const request = cache.getKeys();
      const tookMs = await settleTiming(request);
      const later = cache.getKeys();
      await settleTiming(later);
      await jest.advanceTimersByTimeAsync(3_000);
      const afterRefresh = await cache.getKeys();

      expect(tookMs).toBe(REFRESH_WAIT_MS);
      expect(await request).toEqual({ keyring: good.keyring, stale: true });
      expect(await later).toEqual({ keyring: good.keyring, stale: true });
      expect(afterRefresh.keyring.has('partner') && !afterRefresh.keyring.has('demo')).toBe(true);
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });

    it('does not make a second request wait for a refresh already past its budget', async () => {
      answersAfter(3_000);
      const first = cache.getKeys();
      await jest.advanceTimersByTimeAsync(400);
      await first;

      const second = cache.getKeys();
      const tookMs = await settleTiming(second);

      expect(tookMs).toBe(0);
      expect(await second).toEqual({ keyring: good.keyring, stale: true });
    });

    it('serves the last good keys when the refresh fails, logs it and tells the observer of each refresh', async () => {
      secretsManager.on(GET).rejects(throttled());

      const served = await cache.getKeys();

      expect(served).toEqual({ keyring: good.keyring, stale: true });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          message: 'keys refresh failed',
          error: 'ThrottlingException: Rate exceeded',
          servingStaleKeys: true,
          staleKeysAgeSeconds: 60,
        }),
      );
      expect(refreshes).toEqual(['succeeded', 'failed']);
    });

    it('starts the next refresh no sooner than the stale retry interval after a failed one started', async () => {
      secretsManager.on(GET).rejects(throttled());
      await cache.getKeys();

      jest.advanceTimersByTime(STALE_RETRY_MS - 1);
      await cache.getKeys();
      await cache.getKeys();
      expect(secretsManager.calls(GET)).toHaveLength(2);

      jest.advanceTimersByTime(1);
      await cache.getKeys();
      expect(secretsManager.calls(GET)).toHaveLength(3);
    });

    it('keeps the good keys when the secret is edited into something malformed', async () => {
      secretsManager.on(GET).resolves({ SecretString: JSON.stringify({ demo: 'short' }) });

      await expect(cache.getKeys()).resolves.toEqual({ keyring: good.keyring, stale: true });
    });

    it('gives up on the stale keys at TTL + maximum staleness', async () => {
      secretsManager.on(GET).rejects(throttled());

      jest.advanceTimersByTime(MAX_STALE_MS - 1);
      await expect(cache.getKeys()).resolves.toEqual({ keyring: good.keyring, stale: true });
      jest.advanceTimersByTime(STALE_RETRY_MS);

      await expect(cache.getKeys()).rejects.toThrow(
        new KeysUnavailableError('keys are older than the staleness bound and cannot be refreshed'),
      );
    });
  });

  describe('with nothing usable to serve', () => {
    it('makes the request wait for the fetch in flight, however long it takes within its deadline', async () => {
      answersAfter(1_200);

      const request = cache.getKeys();
      const tookMs = await settleTiming(request);

      expect(tookMs).toBe(1_200);
      expect((await request).stale).toBe(false);
    });

    it('answers unavailable at once until the retry interval after a failed fetch, then fetches again', async () => {
      secretsManager.on(GET).rejects(throttled());
      await expect(cache.getKeys()).rejects.toThrow(new KeysUnavailableError('keys have never loaded'));
      secretsManager.on(GET).resolves({ SecretString: SECRET_STRING });

      jest.advanceTimersByTime(UNAVAILABLE_RETRY_MS - 1);
      await expect(cache.getKeys()).rejects.toThrow(KeysUnavailableError);
      expect(secretsManager.calls(GET)).toHaveLength(1);
      jest.advanceTimersByTime(1);

      await expect(cache.getKeys()).resolves.toMatchObject({ stale: false });
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });

    it('spaces fetches from the start of the failed one, so a slow failure is retried at once', async () => {
      secretsManager.on(GET).callsFake(
        () =>
          new Promise((resolve) => {
            setTimeout(() => {
              resolve(throttled());
            }, UNAVAILABLE_RETRY_MS + 100);
          }),
      );
      const failed = cache.getKeys();
      await settleTiming(failed);
      await expect(failed).rejects.toThrow(KeysUnavailableError);
      secretsManager.on(GET).resolves({ SecretString: SECRET_STRING });

      await expect(cache.getKeys()).resolves.toMatchObject({ stale: false });
    });

    it('recovers as soon as a fetch succeeds again after the staleness bound passed', async () => {
      await cache.getKeys();
      secretsManager.on(GET).rejects(throttled());
      jest.advanceTimersByTime(TTL_MS + MAX_STALE_MS);
      await expect(cache.getKeys()).rejects.toThrow(KeysUnavailableError);

      secretsManager.on(GET).resolves({ SecretString: SECRET_STRING });
      jest.advanceTimersByTime(UNAVAILABLE_RETRY_MS);

      await expect(cache.getKeys()).resolves.toMatchObject({ stale: false });
    });

    it.each<[string, ScriptedOutcome, string]>([
      ['Secrets Manager throttles', throttled(), 'ThrottlingException: Rate exceeded'],
      [
        'the only version of the secret is malformed',
        { SecretString: 'not json' },
        'MalformedSecretError: secret is not valid JSON',
      ],
      [
        'the secret is binary, with no SecretString',
        { SecretBinary: 'AQID' },
        'MalformedSecretError: secret has no SecretString (binary secrets are not supported)',
      ],
    ])('is unavailable when keys have never loaded and %s, and logs why', async (_label, answer, error) => {
      secretsManager.on(GET).callsFake(() => Promise.resolve(answer));

      await expect(cache.getKeys()).rejects.toThrow(new KeysUnavailableError('keys have never loaded'));
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'keys refresh failed', error }),
      );
    });

    it('serves no stale keys at all when the staleness bound is zero', async () => {
      const strict = cacheWith({ maxStaleMs: 0 });
      await strict.getKeys();
      secretsManager.on(GET).rejects(throttled());
      jest.advanceTimersByTime(TTL_MS);

      await expect(strict.getKeys()).rejects.toThrow(KeysUnavailableError);
    });
  });

  describe('the age of the keys', () => {
    it('counts from the start of the fetch that read them, so a slow fetch does not stretch the TTL', async () => {
      answersAfter(1_000);
      const first = cache.getKeys();
      await settleTiming(first);
      secretsManager.on(GET).resolves({ SecretString: SECRET_STRING });

      // One TTL after the fetch started (not after it ended), the keys are due.
      jest.advanceTimersByTime(TTL_MS - 1_000 - 1);
      await cache.getKeys();
      const beforeDue = secretsManager.calls(GET).length;
      jest.advanceTimersByTime(1);
      await cache.getKeys();

      expect([beforeDue, secretsManager.calls(GET).length]).toEqual([1, 2]);
    });

    it('says when the keys served were read: between the start and the end of their fetch', async () => {
      const startedAt = Date.now();
      answersAfter(300);

      const read = cache.read();
      await settleTiming(read);

      expect(await read).toMatchObject({
        stale: false,
        readNotBefore: startedAt,
        readNotAfter: startedAt + 300,
      });
    });
  });

  describe('newest()', () => {
    it('waits for a refresh slower than the 250 ms wait to its end, and gives its keys', async () => {
      await cache.getKeys();
      jest.advanceTimersByTime(TTL_MS);
      answersAfter(1_000, JSON.stringify({ partner: PARTNER_KEY }));
      const served = await (async () => {
        const request = cache.getKeys();
        await settleTiming(request);
        return request;
      })();

      const newest = cache.newest();
      const tookMs = await settleTiming(newest);

      expect(served.stale).toBe(true);
      expect(tookMs).toBe(1_000 - REFRESH_WAIT_MS);
      expect([...((await newest)?.keyring.keys() ?? [])]).toEqual(['partner']);
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });

    it('fetches nothing while the keys are fresh, and nothing while a failed refresh is being spaced out', async () => {
      const fresh = await cache.getKeys();
      expect((await cache.newest())?.keyring).toBe(fresh.keyring);
      jest.advanceTimersByTime(TTL_MS);
      secretsManager.on(GET).rejects(throttled());
      await cache.getKeys();

      const newest = await cache.newest();

      expect(newest).toMatchObject({ keyring: fresh.keyring, stale: true });
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });
  });

  describe('as one shard of several', () => {
    it('names its shard on every line it logs, and never the secret', async () => {
      const brokenSecret = JSON.stringify({ demo: [DEMO_KEY, 'sha256:1234'], partner: PARTNER_KEY });
      secretsManager.on(GET).resolves({ SecretString: brokenSecret });
      const shard = cacheWith({ shard: 7, entryBuilding: 'eager' });
      await shard.getKeys();
      jest.advanceTimersByTime(TTL_MS);
      secretsManager.on(GET).rejects(throttled());

      await shard.getKeys();

      expect(logs.entries().map((entry) => [entry.message, entry.shard])).toEqual([
        ['malformed key entry ignored', 7],
        ['keys loaded', 7],
        ['keys refresh failed', 7],
      ]);
      expect(logs.lines.join('\n')).not.toContain(DEMO_KEY);
    });
  });

  describe('after the execution environment was frozen with a fetch in flight', () => {
    it('abandons that fetch past its deadline, fetches anew, and ignores the old answer', async () => {
      // A fetch that never settles in real time: its environment was frozen between two invocations.
      secretsManager.on(GET).callsFake(() => new Promise(() => undefined));
      cache.warm();
      jest.setSystemTime(Date.now() + ABANDON_AFTER_MS + 1);
      secretsManager.on(GET).resolves({ SecretString: SECRET_STRING });

      await expect(cache.getKeys()).resolves.toMatchObject({ stale: false });
      expect(secretsManager.calls(GET)).toHaveLength(2);
    });

    it('keeps waiting on a fetch that is still within its deadline', async () => {
      answersAfter(ABANDON_AFTER_MS - 100);
      cache.warm();
      await jest.advanceTimersByTimeAsync(ABANDON_AFTER_MS - 200);

      const request = cache.getKeys();
      await settleTiming(request);

      await expect(request).resolves.toMatchObject({ stale: false });
      expect(secretsManager.calls(GET)).toHaveLength(1);
    });
  });
});
