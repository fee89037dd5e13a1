/**
 * The payment handler as the Lambda composes it (real SDK client with the Lambda's bounds, a key cache per shard,
 * handler), against moto behind a fault-injecting proxy, for every way Secrets Manager can fail. Requests go one at
 * a time, as one execution environment serves them. Over one secret (every call fails), and over a registry of
 * four shards where only one shard's secret fails while an app on another shard is asked for alongside.
 */
import { KEY_FETCH_ATTEMPTS, KEY_FETCH_BUDGET_MS } from '../../../lambda/payment/secrets-manager-source';
import type { RegistryLayout } from '../../../shared/keys/registry';
import { requestOf } from '../../support/events';
import { FAULTS, startFaultProxy, type FaultProxy } from '../../support/fault-proxy';
import {
  inProcessPaymentHandler,
  runBrownout,
  runRecovery,
  type FaultPlacement,
  type Probe,
  type RequestRecord,
} from '../../support/fault-scenarios';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../../support/keys';
import { sharedMoto, type MotoServer, createMotoSecret } from '../../support/moto';
import { createMotoRegistry } from '../../support/registry-moto';
import { appOnShard } from '../../support/shards';

const TTL_MS = 1_000;
/**
 * The stated bounds (no stall over 1 s with usable keys; Secrets Manager asked again within 1 s of recovery). How
 * long moto then takes to answer is not ours to bound: a loaded machine may slow it, so only a 200 is required.
 */
const STALL_BOUND_MS = 1_000;
const REFETCH_BOUND_MS = 1_000;
/** With nothing usable, a failed fetch is followed by the next no sooner than this after it started. */
const UNAVAILABLE_RETRY_MS = 500;
const OUTAGE_MS = 2_500;

/** The app whose shard fails and, with shards, an app on a healthy shard. */
const SHARDS = 4;
const FAULTED_APP = appOnShard(1, SHARDS, 'faulted');
const HEALTHY_APP = appOnShard(2, SHARDS, 'healthy');

interface RegistryUnderTest {
  readonly registry: string | RegistryLayout;
  /** The event the scenario sends, for an app whose keys are in the failing secret. */
  readonly event: unknown;
  /** Where the fault applies and what is asked alongside (nothing, with one secret). */
  placement(proxy: FaultProxy, service: (event: unknown) => Promise<number>): FaultPlacement;
}

async function oneSecret(moto: MotoServer): Promise<RegistryUnderTest> {
  const secretArn = await createMotoSecret(moto, 'payment-api/fault-keys', SECRET_STRING);
  return { registry: secretArn, event: requestOf('demo', DEMO_KEY), placement: () => ({}) };
}

async function fourShards(moto: MotoServer): Promise<RegistryUnderTest> {
  const texts = [
    '{}',
    JSON.stringify({ [FAULTED_APP]: DEMO_KEY }),
    JSON.stringify({ [HEALTHY_APP]: PARTNER_KEY }),
    '{}',
  ];
  const { layout } = await createMotoRegistry(moto, { stackName: 'FaultTest', shards: SHARDS, texts });
  const healthy = requestOf(HEALTHY_APP, PARTNER_KEY);
  return {
    registry: layout,
    event: requestOf(FAULTED_APP, DEMO_KEY),
    placement: (_proxy, service) => ({ secretId: layout.shardIds[1], alongside: () => service(healthy) }),
  };
}

/**
 * Every request for the app on a healthy shard answered 200. With stale keys usable none waits 1 s (our bound: at
 * most the 250 ms refresh wait); with a staleness bound of 0 each waits for its shard's refresh, moto's time.
 */
function expectServedNormally(
  alongside: readonly RequestRecord[],
  placement: FaultPlacement,
  staleKeysUsable: boolean,
): void {
  if (placement.alongside === undefined) {
    expect(alongside).toEqual([]);
    return;
  }
  expect(alongside.length).toBeGreaterThan(0);
  expect(alongside.filter((request) => request.status !== 200)).toEqual([]);
  if (staleKeysUsable) {
    expect(Math.max(...alongside.map((request) => request.tookMs))).toBeLessThan(STALL_BOUND_MS);
  }
}

describe.each([
  ['one secret', oneSecret],
  ['one shard of four failing', fourShards],
])('the payment handler while Secrets Manager fails: %s', (_name, setUp) => {
  let moto: MotoServer;
  let underTest: RegistryUnderTest;
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    moto = await sharedMoto();
    underTest = await setUp(moto);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await moto.stop();
  });

  /** The Lambda's composition of handler, caches and client, pointed at a new proxy; the fault placed as the registry says. */
  async function serviceBehindProxy(maxStaleMs: number) {
    const proxy = await startFaultProxy(moto.port);
    proxies.push(proxy);
    const service = inProcessPaymentHandler(proxy.endpoint, underTest.registry, {
      ttlMs: TTL_MS,
      maxStaleMs,
    });
    const probe: Probe = () => service(underTest.event);
    return { proxy, probe, placement: underTest.placement(proxy, service) };
  }

  it.concurrent.each(FAULTS)(
    '%s, with stale keys usable: every request is answered 200, none waits 1 s',
    async (fault) => {
      const { proxy, probe, placement } = await serviceBehindProxy(5 * 60_000);
      expect(await probe()).toBe(200);

      const report = await runBrownout(proxy, fault, probe, {
        ttlMs: TTL_MS,
        durationMs: 2_500,
        ...placement,
      });

      expect(report.requests.filter((request) => request.status !== 200)).toEqual([]);
      expect(report.slowestMs).toBeLessThan(STALL_BOUND_MS);
      // The refresh was tried under the fault (the proxy saw it; a refused proxy sees nothing), not on every request.
      expect(fault === 'refused' && placement.secretId === undefined ? true : report.calls >= 1).toBe(true);
      expect(report.calls).toBeLessThanOrEqual(2 * KEY_FETCH_ATTEMPTS.maxAttempts);
      expectServedNormally(report.alongside, placement, true);
    },
    30_000,
  );

  it.concurrent.each(FAULTS)(
    '%s, with nothing usable: 503 within the fetch bound, bounded calls, asked again within 1 s of recovery, then 200',
    async (fault) => {
      const { proxy, probe, placement } = await serviceBehindProxy(0);
      await proxy.setMode(fault, placement.secretId === undefined ? {} : { secretId: placement.secretId });

      const report = await runRecovery(proxy, fault, probe, {
        outageMs: OUTAGE_MS,
        limitMs: 5_000,
        ...placement,
      });
      // One fetch in flight, the next no sooner than 500 ms after a failed one started, 2 attempts each.
      const mostCalls =
        KEY_FETCH_ATTEMPTS.maxAttempts * (Math.floor(report.outageMs / UNAVAILABLE_RETRY_MS) + 1);

      expect(report.outage.filter((request) => request.status !== 503)).toEqual([]);
      expect(Math.max(...report.outage.map((request) => request.tookMs))).toBeLessThan(
        KEY_FETCH_BUDGET_MS + 300,
      );
      expect(report.calls).toBeLessThanOrEqual(mostCalls);
      // Time the whole process stood still (a loaded machine) is not the handler waiting: see stall-meter.ts.
      expect((report.refetchMs ?? Infinity) - report.refetchStalledMs).toBeLessThan(REFETCH_BOUND_MS);
      expect(report.recoveryMs).toEqual(expect.any(Number));
      expectServedNormally(report.alongside, placement, false);
    },
    30_000,
  );
});
