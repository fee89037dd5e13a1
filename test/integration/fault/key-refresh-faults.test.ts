/**
 * The payment handler as the Lambda composes it (real SDK client with the Lambda's bounds, key cache, handler),
 * against moto behind a fault-injecting proxy, for every way Secrets Manager can fail. Requests go one at a time,
 * as one execution environment serves them.
 */
import { PAYMENT_CALL_BOUNDS } from '../../../lambda/payment/secrets-manager-source';
import { paymentEvent } from '../../support/events';
import { FAULTS, startFaultProxy, type Fault, type FaultProxy } from '../../support/fault-proxy';
import { inProcessPaymentService, runBrownout, runRecovery, type Probe } from '../../support/fault-scenarios';
import { DEMO_KEY, SECRET_STRING } from '../../support/keys';
import { createMotoSecret, startMoto, type MotoServer } from '../../support/moto';

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

const event = paymentEvent([
  ['Content-Type', 'application/json'],
  ['App-id', 'demo'],
  ['App-key', DEMO_KEY],
]);

describe('the payment handler while Secrets Manager fails', () => {
  let moto: MotoServer;
  let secretArn: string;
  const proxies: FaultProxy[] = [];

  beforeAll(async () => {
    moto = await startMoto();
    secretArn = await createMotoSecret(moto, 'payment-api/fault-keys', SECRET_STRING);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(proxies.map((proxy) => proxy.close()));
    await moto.stop();
  });

  async function proxyTo(mode: 'pass' | Fault): Promise<FaultProxy> {
    const proxy = await startFaultProxy(moto.port);
    proxies.push(proxy);
    await proxy.setMode(mode);
    return proxy;
  }

  /** The Lambda's composition of handler, cache and client, pointed at the proxy. */
  function paymentService(proxy: FaultProxy, maxStaleMs: number): Probe {
    return inProcessPaymentService(proxy.endpoint, secretArn, { ttlMs: TTL_MS, maxStaleMs }, event);
  }

  it.concurrent.each(FAULTS)(
    '%s, with stale keys usable: every request is answered 200, none waits 1 s',
    async (fault) => {
      const proxy = await proxyTo('pass');
      const probe = paymentService(proxy, 5 * 60_000);
      expect(await probe()).toBe(200);

      const report = await runBrownout(proxy, fault, probe, { ttlMs: TTL_MS, durationMs: 2_500 });

      expect(report.requests.filter((request) => request.status !== 200)).toEqual([]);
      expect(report.slowestMs).toBeLessThan(STALL_BOUND_MS);
      // The refresh was tried under the fault (the proxy saw it), and not on every request.
      expect(fault === 'refused' || report.calls >= 1).toBe(true);
      expect(report.calls).toBeLessThanOrEqual(2 * PAYMENT_CALL_BOUNDS.maxAttempts);
    },
    30_000,
  );

  it.concurrent.each(FAULTS)(
    '%s, with nothing usable: 503 within the fetch bound, bounded calls, asked again within 1 s of recovery, then 200',
    async (fault) => {
      const proxy = await proxyTo(fault);
      const probe = paymentService(proxy, 0);

      const report = await runRecovery(proxy, fault, probe, { outageMs: OUTAGE_MS, limitMs: 5_000 });
      // One fetch in flight, the next no sooner than 500 ms after a failed one started, 2 attempts each.
      const mostCalls =
        PAYMENT_CALL_BOUNDS.maxAttempts * (Math.floor(report.outageMs / UNAVAILABLE_RETRY_MS) + 1);

      expect(report.outage.filter((request) => request.status !== 503)).toEqual([]);
      expect(Math.max(...report.outage.map((request) => request.tookMs))).toBeLessThan(
        PAYMENT_CALL_BOUNDS.callDeadlineMs + 300,
      );
      expect(report.calls).toBeLessThanOrEqual(mostCalls);
      expect(report.refetchMs ?? Infinity).toBeLessThan(REFETCH_BOUND_MS);
      expect(report.recoveryMs).toEqual(expect.any(Number));
    },
    30_000,
  );
});
