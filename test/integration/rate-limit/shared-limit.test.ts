/**
 * The per-app limit as deployed: the payment asset `cdk synth` builds with `appRateLimit` (lambda/payment/
 * rate-limited.ts), each execution environment a Node process of its own serving one request at a time, against
 * moto's Secrets Manager and DynamoDB. Several environments share one app's limit; when DynamoDB fails (a fault
 * proxy in front of moto's DynamoDB only), payments go on within the limiter's bound, or get 503 if so configured.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BREAKER_FAILURES_TO_OPEN } from '../../../lambda/payment/rate-limit/store-breaker';
import { runFleet } from '../../support/asset-fleet';
import { logEntries, readEmfLines, totalCounts } from '../../support/emf';
import { FAULTS, startFaultProxy, type Fault } from '../../support/fault-proxy';
import { DEMO_KEY, PARTNER_KEY } from '../../support/keys';
import { LIMITER_WORST_ADDED_MS } from '../../../lambda/payment/rate-limit/limiter';
import {
  createMotoRateLimitTable,
  createMotoSecret,
  EMULATOR_LIMITER_DEADLINE_MS,
  startMoto,
  type MotoServer,
} from '../../support/moto';
import {
  limitedAssetEnv,
  requestOf,
  runFlood,
  STANDARD_FLOOD,
  type FloodReport,
} from '../../support/rate-limit-scenarios';
import { synthesizeApp } from '../../support/synth';

const { floodLimit: FLOOD_LIMIT, processes: ENVIRONMENTS } = STANDARD_FLOOD;
const FLOOD_SECONDS = STANDARD_FLOOD.durationMs / 1000;
const FLOOD_FACTOR = STANDARD_FLOOD.floodOffered / FLOOD_LIMIT.perSecond;

let outdir: string;
let assetDir: string;
let moto: MotoServer;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'payment-cdk-out-limits-'));
  const app = await synthesizeApp(outdir, { appRateLimit: String(FLOOD_LIMIT.perSecond) });
  assetDir = app.paymentAssetDir;
  moto = await startMoto();
}, 240_000);

afterAll(async () => {
  await moto.stop();
  rmSync(outdir, { recursive: true, force: true });
});

describe(`one app flooding at ${FLOOD_FACTOR} times its limit from ${ENVIRONMENTS} execution environments, another below its own`, () => {
  let flood: FloodReport;

  beforeAll(async () => {
    flood = await runFlood({ assetDir, moto, ...STANDARD_FLOOD });
  }, 120_000);

  it('accepts the flooding app within 0.8–1.2 of its limit in every whole second after the first', () => {
    const afterTheFirst = flood.floodAccepted.slice(1);
    const offeredAfterTheFirst = flood.floodOffered.slice(1).reduce((sum, count) => sum + count, 0);

    // What the band is about: a flood, not a trickle the machine could not speed up.
    expect(offeredAfterTheFirst / afterTheFirst.length).toBeGreaterThanOrEqual(5 * FLOOD_LIMIT.perSecond);
    expect(flood.floodOther).toEqual([]);
    expect(afterTheFirst).toHaveLength(FLOOD_SECONDS - 1);
    const outOfBand = afterTheFirst.filter(
      (accepted) => accepted < 0.8 * FLOOD_LIMIT.perSecond || accepted > 1.2 * FLOOD_LIMIT.perSecond,
    );
    // Every second's count beside the ones out of band, so that a failure shows the whole run.
    expect({ accepted: flood.floodAccepted, outOfBand }).toEqual({
      accepted: flood.floodAccepted,
      outOfBand: [],
    });
  });

  it('never refuses the app below its own limit', () => {
    expect(flood.steady.length).toBeGreaterThanOrEqual(FLOOD_SECONDS);
    expect(flood.steady.filter((invocation) => invocation.statusCode !== 200)).toEqual([]);
  });

  it('counts every 429 as Throttled, and the limiter is never unavailable', () => {
    expect(flood.floodLimited.length).toBeGreaterThan(0);
    expect(flood.emfTotals.Throttled).toBe(flood.floodLimited.length);
    expect(flood.emfTotals.RateLimiterUnavailable ?? 0).toBe(0);
  });

  it('makes at most one DynamoDB call per request on average', () => {
    expect(flood.requests).toBeGreaterThan(0);
    expect(flood.dynamoDbCalls / flood.requests).toBeLessThanOrEqual(1);
  });
});

/** An unbounded call would wait SLOW_ANSWER_MS (3 s) or forever: this is far above the bound, far below those. */
const BOUND_PROOF_MS = 1_000;

/**
 * The check's budget for each fault, set explicitly. Where the fault is the store never answering in time, the
 * production budget: the test proves it fires, which no machine's speed can spoil. Where the fault is an answer
 * (a refusal, a reset, a throttle, a denial), the emulator's: the test proves what the answer means, and must not
 * depend on the proxy and moto answering within 150 ms on a busy machine (under load, reset-mid-answer and
 * access-denied got a TimeoutError instead).
 */
const FAULT_BUDGET_MS: Readonly<Record<Fault, number>> = {
  refused: EMULATOR_LIMITER_DEADLINE_MS,
  'black-holed': LIMITER_WORST_ADDED_MS,
  slow: LIMITER_WORST_ADDED_MS,
  'reset-mid-answer': EMULATOR_LIMITER_DEADLINE_MS,
  throttling: EMULATOR_LIMITER_DEADLINE_MS,
  'access-denied': EMULATOR_LIMITER_DEADLINE_MS,
};

/** The error each fault shows in the log line, as the SDK names it. */
const FAULT_ERRORS: Readonly<Record<Fault, RegExp>> = {
  refused: /ECONNREFUSED/,
  'black-holed': /TimeoutError/,
  slow: /TimeoutError/,
  'reset-mid-answer': /aborted/,
  throttling: /ProvisionedThroughputExceededException/,
  'access-denied': /AccessDeniedException/,
};

/**
 * UpdateItem calls that meet the fault, from two environments' three checks each: each check calls once (never
 * again after a failure that may have landed), and the third failure in a row opens the breaker; a throttled item
 * is not asked again in its window (once more if the checks straddle the window's edge). A refused connection never
 * reaches the proxy.
 */
const FAULTED_CALLS: Readonly<Record<Fault, { readonly min: number; readonly max: number }>> = {
  refused: { min: 0, max: 0 },
  'black-holed': { min: 6, max: 6 },
  slow: { min: 6, max: 6 },
  'reset-mid-answer': { min: 6, max: 6 },
  throttling: { min: 2, max: 4 },
  'access-denied': { min: 6, max: 6 },
};

describe('while DynamoDB fails', () => {
  let secretArn: string;
  const tableName = 'rate-limits-faults';

  beforeAll(async () => {
    secretArn = await createMotoSecret(
      moto,
      'payment-api/fault-limits',
      JSON.stringify({ demo: DEMO_KEY, partner: PARTNER_KEY }),
    );
    await createMotoRateLimitTable(moto, tableName);
  }, 60_000);

  it.each(FAULTS)(
    '%s: with failure open the payment goes on, with closed it gets 503; counted, logged, within the budget',
    async (fault) => {
      const proxy = await startFaultProxy(moto.port);
      const requests = 3;
      try {
        const run = await runFleet({
          assetDir,
          env: limitedAssetEnv({
            moto,
            secretArn,
            tableName,
            defaultLimit: FLOOD_LIMIT,
            dynamoDbEndpoint: proxy.endpoint,
            budgetMs: FAULT_BUDGET_MS[fault],
          }),
          processes: [{ RATE_LIMIT_FAILURE: 'open' }, { RATE_LIMIT_FAILURE: 'closed' }],
          // Loads the keys and leaves DynamoDB alone: an unknown app is refused before any limit.
          warmUp: [requestOf('nobody', DEMO_KEY)],
          warmUpStatus: 401,
          beforeStart: () => proxy.setMode(fault),
          workload: {
            kind: 'sequence',
            events: Array.from({ length: requests }, () => requestOf('demo', DEMO_KEY)),
          },
        });

        const answers = (environment: number) =>
          run.invocations.filter((invocation) => invocation.process === environment);
        expect(answers(0).map((invocation) => invocation.statusCode)).toEqual([200, 200, 200]);
        expect(answers(0).every(({ headers }) => headers.RateLimit === undefined)).toBe(true);
        expect(answers(1).map((invocation) => invocation.statusCode)).toEqual([503, 503, 503]);
        expect(JSON.parse(answers(1)[0]?.body ?? '')).toMatchObject({ code: 'unavailable' });
        if (FAULT_BUDGET_MS[fault] === LIMITER_WORST_ADDED_MS) {
          expect(Math.max(...run.invocations.map((invocation) => invocation.tookMs))).toBeLessThan(
            BOUND_PROOF_MS,
          );
        }
        for (const [environment, failure] of [
          [0, 'open'],
          [1, 'closed'],
        ] as const) {
          const totals = totalCounts(readEmfLines(run.outputs[environment] ?? '').lines, [
            'KeysExpiringSoon',
            'SecretFill',
          ]);
          expect(totals.RateLimiterUnavailable).toBe(requests);
          const warnings = logEntries(run.outputs[environment] ?? '', 'rate limiter unavailable');
          expect(warnings.map((entry) => [entry.level, entry.appId, entry.failure])).toEqual(
            Array.from({ length: requests }, () => ['warn', 'demo', failure]),
          );
          expect(String(warnings[0]?.error)).toMatch(FAULT_ERRORS[fault]);
        }
        const faulted = proxy.calls.filter((call) => call.operation === 'UpdateItem' && call.mode === fault);
        expect(faulted.length).toBeGreaterThanOrEqual(FAULTED_CALLS[fault].min);
        expect(faulted.length).toBeLessThanOrEqual(FAULTED_CALLS[fault].max);
      } finally {
        await proxy.close();
      }
    },
    60_000,
  );
});

describe('while DynamoDB stays down, one app flooding and another below its limit, from two environments', () => {
  const SECONDS = 4;

  it.each([
    ['black-holed', 'open'],
    ['throttling', 'closed'],
  ] as const)(
    '%s, failing %s: each environment calls it at most once a second once its breaker is open, every request answers within the bound as configured, and every one counts in RateLimiterUnavailable',
    async (fault, failure) => {
      const report = await runFlood({
        assetDir,
        moto,
        ...STANDARD_FLOOD,
        processes: 2,
        durationMs: SECONDS * 1000,
        bounds: 'production',
        fault,
        failure,
      });

      const invocations = report.run.invocations;
      expect(invocations.length).toBeGreaterThan(SECONDS * STANDARD_FLOOD.floodOffered * 0.5);
      expect(Math.max(...invocations.map((invocation) => invocation.tookMs))).toBeLessThan(BOUND_PROOF_MS);
      const expectedStatus = failure === 'open' ? 200 : 503;
      expect(invocations.filter((invocation) => invocation.statusCode !== expectedStatus)).toEqual([]);
      expect(report.unavailable).toHaveLength(invocations.length);
      expect(report.emfTotals.RateLimiterUnavailable).toBe(invocations.length);
      for (const calls of report.callsByEnvironment) {
        // Three failures in a row open the breaker; then one probe a second, at most.
        expect(calls.length).toBeGreaterThanOrEqual(BREAKER_FAILURES_TO_OPEN);
        expect(calls.length).toBeLessThanOrEqual(BREAKER_FAILURES_TO_OPEN + SECONDS + 1);
      }
    },
    120_000,
  );
});

describe('while DynamoDB stays down, failing local (the default), one app flooding and another below its limit, from two environments', () => {
  const SECONDS = 4;

  it("each environment enforces the app's limit itself: every whole second at least the limit and at most environments x limit accepted, the calm app never refused, every request counted unavailable", async () => {
    const environments = 2;
    const report = await runFlood({
      assetDir,
      moto,
      ...STANDARD_FLOOD,
      processes: environments,
      durationMs: SECONDS * 1000,
      bounds: 'production',
      fault: 'black-holed',
      failure: 'local',
    });

    const seconds = report.floodAccepted.slice(1);
    expect(seconds).toHaveLength(SECONDS - 1);
    const outOfBand = seconds.filter(
      (accepted) =>
        accepted < 0.8 * FLOOD_LIMIT.perSecond || accepted > environments * FLOOD_LIMIT.perSecond * 1.2,
    );
    expect({ accepted: report.floodAccepted, outOfBand }).toEqual({
      accepted: report.floodAccepted,
      outOfBand: [],
    });
    expect(report.floodLimited.length).toBeGreaterThan(0);
    expect(report.floodOther).toEqual([]);
    expect(report.steady.length).toBeGreaterThan(0);
    expect(report.steady.filter((invocation) => invocation.statusCode !== 200)).toEqual([]);
    expect(report.emfTotals.RateLimiterUnavailable).toBe(report.run.invocations.length);
    expect(Math.max(...report.run.invocations.map((invocation) => invocation.tookMs))).toBeLessThan(
      BOUND_PROOF_MS,
    );
  }, 120_000);
});
