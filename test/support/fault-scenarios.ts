/**
 * The two scenarios of the runtime issue, driven request by request as one Lambda execution environment serves
 * them (one at a time), against Secrets Manager behind a fault proxy. Shared by the fault tests, which assert the
 * bounds, and by the benchmark, which prints the figures.
 */
import { KeyCache } from '../../lambda/payment/key-cache';
import { createSecretsManagerClient } from '../../shared/aws/bounded-client';
import { PAYMENT_CALL_BOUNDS, secretsManagerSource } from '../../lambda/payment/secrets-manager-source';
import { createHandler } from '../../lambda/payment/create-handler';
import { createJsonLogger } from '../../shared/logger';
import type { Fault, FaultProxy } from './fault-proxy';
import { MOTO_AWS_ENV } from './moto';

/** Sends one request to the service under test and returns its HTTP status. */
export type Probe = () => Promise<number>;

export interface RequestRecord {
  /** Since the scenario's phase started. */
  readonly startedMs: number;
  readonly tookMs: number;
  readonly status: number;
}

export interface BrownoutReport {
  readonly fault: Fault;
  readonly requests: readonly RequestRecord[];
  readonly slowestMs: number;
  /** GetSecretValue calls that reached the proxy during the brownout. */
  readonly calls: number;
}

export interface RecoveryReport {
  readonly fault: Fault;
  /** The requests made while Secrets Manager failed. */
  readonly outage: readonly RequestRecord[];
  readonly outageMs: number;
  /** GetSecretValue calls that reached the proxy during the outage. */
  readonly calls: number;
  /** The same, per second. */
  readonly outageCallsPerSecond: number;
  /** From the moment Secrets Manager answered again to the first 200; undefined if none came. */
  readonly recoveryMs: number | undefined;
  /**
   * From the moment Secrets Manager answered again to the first GetSecretValue call that reached it: how long the
   * service itself waited before asking again, whatever the time the answer then took. Undefined if none came.
   */
  readonly refetchMs: number | undefined;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function timedProbe(probe: Probe, phaseStart: number): Promise<RequestRecord> {
  const started = performance.now();
  const status = await probe();
  return { startedMs: started - phaseStart, tookMs: performance.now() - started, status };
}

function callsSince(proxy: FaultProxy, since: number, until = Date.now()): number {
  return proxy.calls.filter(
    (call) => call.operation === 'GetSecretValue' && call.at >= since && call.at <= until,
  ).length;
}

/**
 * Stale keys usable, Secrets Manager failing: the keys were just loaded (fresh) when this starts; the proxy
 * switches to `fault`, and once the TTL has passed requests are sent one at a time for `durationMs`.
 */
export async function runBrownout(
  proxy: FaultProxy,
  fault: Fault,
  probe: Probe,
  options: { readonly ttlMs: number; readonly durationMs: number },
): Promise<BrownoutReport> {
  await proxy.setMode(fault);
  await pause(options.ttlMs + 50);
  const since = Date.now();
  const phaseStart = performance.now();
  const requests: RequestRecord[] = [];
  while (performance.now() - phaseStart < options.durationMs) {
    requests.push(await timedProbe(probe, phaseStart));
    await pause(5);
  }
  const calls = callsSince(proxy, since);
  await proxy.setMode('pass');
  return { fault, requests, slowestMs: Math.max(...requests.map((request) => request.tookMs)), calls };
}

/** Pause between two requests of the recovery scenario: fine enough for a 1 s bound, gentle on the machine. */
const POLL_MS = 20;
/** How long past `outageMs` the recovery waits for an attempt to arrive (refused connections never do). */
const HELD_ATTEMPT_WAIT_MS = 1_500;

/**
 * Nothing usable (the proxy already fails with `fault` and no keys have loaded): requests go one at a time; after
 * `outageMs`, as soon as the next attempt reaches the proxy (and is failed or held by it), Secrets Manager answers
 * again, whatever request is under way, and requests go on until one is answered 200 (for at most `limitMs`).
 */
export async function runRecovery(
  proxy: FaultProxy,
  fault: Fault,
  probe: Probe,
  options: { readonly outageMs: number; readonly limitMs: number },
): Promise<RecoveryReport> {
  const since = Date.now();
  const outageStart = performance.now();
  let recoveredAt: number | undefined;
  let recoveredAtEpoch = 0;
  let callsDuringOutage = 0;
  const restore = (async () => {
    await pause(options.outageMs);
    // The worst moment: just as an attempt reached the failing service (a black-holed one stays stuck).
    const seen = proxy.calls.length;
    const waitUntil = Date.now() + HELD_ATTEMPT_WAIT_MS;
    while (proxy.calls.length === seen && Date.now() < waitUntil) await pause(2);
    callsDuringOutage = callsSince(proxy, since);
    await proxy.setMode('pass');
    recoveredAt = performance.now();
    recoveredAtEpoch = Date.now();
    return recoveredAt;
  })();

  const outage: RequestRecord[] = [];
  let recoveryMs: number | undefined;
  for (;;) {
    const record = await timedProbe(probe, outageStart);
    const answeredAt = outageStart + record.startedMs + record.tookMs;
    if (recoveredAt === undefined) {
      outage.push(record);
    } else if (record.status === 200) {
      recoveryMs = answeredAt - recoveredAt;
      break;
    } else if (answeredAt - recoveredAt > options.limitMs) {
      break;
    }
    await pause(POLL_MS);
  }
  const outageMs = (await restore) - outageStart;
  const firstCallAfter = proxy.calls.find(
    (call) => call.operation === 'GetSecretValue' && call.at >= recoveredAtEpoch,
  );
  return {
    fault,
    outage,
    outageMs,
    calls: callsDuringOutage,
    outageCallsPerSecond: callsDuringOutage / (outageMs / 1000),
    recoveryMs,
    refetchMs: firstCallAfter === undefined ? undefined : firstCallAfter.at - recoveredAtEpoch,
  };
}

/**
 * The payment handler composed as lambda/payment/index.ts composes it (the Lambda's bounded SDK client, the key
 * cache, warmed at once, the handler), in this process, pointed at `endpoint` (a fault proxy) with moto's test
 * credentials. A probe sends it one valid request as `event`.
 */
export function inProcessPaymentService(
  endpoint: string,
  secretArn: string,
  cache: { readonly ttlMs: number; readonly maxStaleMs: number },
  event: unknown,
): Probe {
  const logger = createJsonLogger('error', () => undefined);
  const client = createSecretsManagerClient(PAYMENT_CALL_BOUNDS, {
    region: MOTO_AWS_ENV.AWS_REGION,
    endpoint,
    credentials: {
      accessKeyId: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
      secretAccessKey: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    },
  });
  const keys = new KeyCache({ source: secretsManagerSource(secretArn, client), logger, ...cache });
  keys.warm();
  const handler = createHandler({ keys, logger });
  return async () => (await handler(event)).statusCode;
}
