/**
 * The smoke test against `npm start` with per-app rate limits on: its requests with the key can meet the app's
 * limit, and it honours the 429's Retry-After (with its real timer) instead of failing.
 */
import { windowLengthMs } from '../../../lambda/payment/rate-limit/window';
import { generateKey } from '../../../shared/keys/key-material';
import {
  SETUP_TIMEOUT_MS,
  startLocalServerWithKeys,
  type KeyFileServer,
} from '../../support/local-server-process';
import { failedIds, parseReport, runSmokeInProcess } from '../../support/run-smoke';

/**
 * Two requests in each 10-second window (aligned on the clock): the smoke test's third request with the key (body
 * not JSON) meets the limit, unless a window ended between its first and its third request.
 */
const LIMIT = { perSecond: 0.2, burst: 2 };
/** One app per run, each with the same limit, so that a run starts with the app's window unspent. */
const APPS = ['demo', 'demo-2', 'demo-3'] as const;
const KEYS = new Map(APPS.map((appId) => [appId, generateKey()]));
let local: KeyFileServer;

beforeAll(async () => {
  local = await startLocalServerWithKeys(
    Object.fromEntries(APPS.map((appId) => [appId, { keys: [KEYS.get(appId)], rateLimit: LIMIT }])),
    { APP_RATE_LIMIT: '100' },
  );
}, SETUP_TIMEOUT_MS);

afterAll(() => local.stop());

describe('npm run smoke against npm start with per-app rate limits', () => {
  it(
    'waits out the 429 on its third request with the key, sends it again, and passes',
    async () => {
      // Act: a run whose requests straddle a window's end meets no 429 (and must pass too); then another app runs.
      const runs: { retried: string[]; got?: string; retryAfterSeconds?: number }[] = [];
      for (const appId of APPS) {
        const run = await runSmokeInProcess(
          ['--url', `${local.server.baseUrl}/payment`, '--app-id', appId, '--json'],
          { APP_KEY: KEYS.get(appId) ?? '' },
        );
        const report = parseReport(run.stdout);
        expect(failedIds(report)).toEqual([]);
        expect(run.code).toBe(0);
        expect(report.requestsSent).toBe(12);
        const retried = report.checks.filter((check) => check.retry !== undefined);
        runs.push({
          retried: retried.map((check) => check.id),
          ...(retried[0]?.got === undefined ? {} : { got: retried[0].got }),
          ...(retried[0]?.retry === undefined
            ? {}
            : { retryAfterSeconds: retried[0].retry.retryAfterSeconds }),
        });
        if (retried.length > 0) break;
      }

      // Assert: Retry-After is at most one window
      const last = runs.at(-1);
      expect(last?.retried).toEqual(['invalid-json']);
      expect(last?.got).toBe(
        `400 bad_request (sent again after a 429 with Retry-After: ${last?.retryAfterSeconds})`,
      );
      expect(last?.retryAfterSeconds).toBeGreaterThanOrEqual(1);
      expect(last?.retryAfterSeconds).toBeLessThanOrEqual(windowLengthMs(LIMIT) / 1000);
    },
    SETUP_TIMEOUT_MS,
  );
});
