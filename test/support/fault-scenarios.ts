/**
 * The two scenarios of the runtime issue, driven request by request as one Lambda execution environment serves
 * them (one at a time), against Secrets Manager behind a fault proxy: every call failing, or only those for one
 * shard's secret while requests for an app on another shard go on alongside. Shared by the fault tests, which
 * assert the bounds, and by the benchmark, which prints the figures.
 */
import { singleShardLayout, type RegistryLayout } from '../../shared/keys/registry';
import {
  createPaymentSecretsManagerClient,
  secretsManagerSource,
} from '../../lambda/payment/secrets-manager-source';
import { createHandler } from '../../lambda/payment/create-handler';
import { ShardedKeys } from '../../lambda/payment/sharded-keys';
import { createJsonLogger } from '../../shared/logger';
import type { Fault, FaultProxy } from './fault-proxy';
import { motoAccess } from './moto';
import { startStallMeter } from './stall-meter';

/** Sends one request to the service under test and returns its HTTP status. */
export type Probe = () => Promise<number>;

export interface RequestRecord {
  /** Since the scenario's phase started. */
  readonly startedMs: number;
  readonly tookMs: number;
  readonly status: number;
}

/** Where the fault applies, and what else is asked meanwhile. */
export interface FaultPlacement {
  /** Only the calls for this secret (one shard) fail; absent: every call. */
  readonly secretId?: string;
  /** Sent after each request of the scenario: a request for an app on a healthy shard. */
  readonly alongside?: Probe;
}

export interface BrownoutReport {
  readonly fault: Fault;
  readonly requests: readonly RequestRecord[];
  readonly slowestMs: number;
  /** GetSecretValue calls (for the faulted secret, when only one is) that reached the proxy during the brownout. */
  readonly calls: number;
  /** The requests sent alongside. */
  readonly alongside: readonly RequestRecord[];
}

export interface RecoveryReport {
  readonly fault: Fault;
  /** The requests made while Secrets Manager failed. */
  readonly outage: readonly RequestRecord[];
  /** The requests sent alongside, from the start to the first 200 after recovery. */
  readonly alongside: readonly RequestRecord[];
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
  /** Of refetchMs, the time this process was stalled (not running at all): see stall-meter.ts. */
  readonly refetchStalledMs: number;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function timedProbe(probe: Probe, phaseStart: number): Promise<RequestRecord> {
  const started = performance.now();
  const status = await probe();
  return { startedMs: started - phaseStart, tookMs: performance.now() - started, status };
}

/** The GetSecretValue calls of `secretId` (of any secret, when none is given) the proxy saw from `since` on. */
function callsSince(proxy: FaultProxy, since: number, secretId?: string): FaultProxy['calls'] {
  return proxy.calls.filter(
    (call) =>
      call.operation === 'GetSecretValue' &&
      (secretId === undefined || call.secretId === secretId) &&
      call.at >= since,
  );
}

/** The proxy's mode for the calls a placement faults. */
function placeFault(proxy: FaultProxy, mode: 'pass' | Fault, placement: FaultPlacement): Promise<void> {
  return proxy.setMode(mode, placement.secretId === undefined ? {} : { secretId: placement.secretId });
}

/** Sends the alongside request, if any, and records it. */
async function sendAlongside(
  placement: FaultPlacement,
  phaseStart: number,
  into: RequestRecord[],
): Promise<void> {
  if (placement.alongside !== undefined) into.push(await timedProbe(placement.alongside, phaseStart));
}

/**
 * Stale keys usable, Secrets Manager failing: the keys were just loaded (fresh) when this starts; the proxy
 * switches to `fault`, and once the TTL has passed requests are sent one at a time for `durationMs`.
 */
export async function runBrownout(
  proxy: FaultProxy,
  fault: Fault,
  probe: Probe,
  options: { readonly ttlMs: number; readonly durationMs: number } & FaultPlacement,
): Promise<BrownoutReport> {
  await placeFault(proxy, fault, options);
  await pause(options.ttlMs + 50);
  const since = Date.now();
  const phaseStart = performance.now();
  const requests: RequestRecord[] = [];
  const alongside: RequestRecord[] = [];
  while (performance.now() - phaseStart < options.durationMs) {
    requests.push(await timedProbe(probe, phaseStart));
    await sendAlongside(options, phaseStart, alongside);
    await pause(5);
  }
  const calls = callsSince(proxy, since, options.secretId).length;
  await placeFault(proxy, 'pass', options);
  return {
    fault,
    requests,
    slowestMs: Math.max(...requests.map((request) => request.tookMs)),
    calls,
    alongside,
  };
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
  options: { readonly outageMs: number; readonly limitMs: number } & FaultPlacement,
): Promise<RecoveryReport> {
  const since = Date.now();
  const outageStart = performance.now();
  let recoveredAt: number | undefined;
  let recoveredAtEpoch = 0;
  let callsDuringOutage = 0;
  const stalls = startStallMeter();
  const restore = (async () => {
    await pause(options.outageMs);
    // The worst moment: just as an attempt reached the failing service (a black-holed one stays stuck).
    const seen = callsSince(proxy, since, options.secretId).length;
    const waitUntil = Date.now() + HELD_ATTEMPT_WAIT_MS;
    while (callsSince(proxy, since, options.secretId).length === seen && Date.now() < waitUntil)
      await pause(2);
    callsDuringOutage = callsSince(proxy, since, options.secretId).length;
    await placeFault(proxy, 'pass', options);
    recoveredAt = performance.now();
    recoveredAtEpoch = Date.now();
    return recoveredAt;
  })();

  const outage: RequestRecord[] = [];
  const alongside: RequestRecord[] = [];
  let recoveryMs: number | undefined;
  for (;;) {
    const record = await timedProbe(probe, outageStart);
    await sendAlongside(options, outageStart, alongside);
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
  stalls.stop();
  const [firstCallAfter] = callsSince(proxy, recoveredAtEpoch, options.secretId);
  return {
    fault,
    outage,
    alongside,
    outageMs,
    calls: callsDuringOutage,
    outageCallsPerSecond: callsDuringOutage / (outageMs / 1000),
    recoveryMs,
    refetchMs: firstCallAfter === undefined ? undefined : firstCallAfter.at - recoveredAtEpoch,
    refetchStalledMs:
      firstCallAfter === undefined ? 0 : stalls.stalledBetween(recoveredAtEpoch, firstCallAfter.at),
  };
}

/** What the key cache of a test service is set to. */
export interface ServiceCache {
  readonly ttlMs: number;
  readonly maxStaleMs: number;
}

/**
 * The payment handler composed as lambda/payment/compose.ts composes it (the Lambda's bounded client, one key
 * cache per shard, warmed at once with one secret, the handler), in this process, pointed at `endpoint` (a fault
 * proxy) with moto's test credentials. `registry` is one secret's ARN, or a layout of several shards. Gives each
 * event's HTTP status.
 */
export function inProcessPaymentHandler(
  endpoint: string,
  registry: string | RegistryLayout,
  cache: ServiceCache,
): (event: unknown) => Promise<number> {
  const logger = createJsonLogger('error', () => undefined);
  // The Lambda's own client, with its production bounds (PAYMENT_CALL_BOUNDS).
  const client = createPaymentSecretsManagerClient(motoAccess(endpoint));
  const keys = new ShardedKeys({
    layout: typeof registry === 'string' ? singleShardLayout(registry) : registry,
    sourceFor: (_index, secretId) => secretsManagerSource(secretId, client),
    logger,
    ...cache,
  });
  keys.warm();
  const handler = createHandler({ keys, logger });
  return async (event) => (await handler(event)).statusCode;
}

/** inProcessPaymentHandler over one secret, probed with one event. */
export function inProcessPaymentService(
  endpoint: string,
  secretArn: string,
  cache: ServiceCache,
  event: unknown,
): Probe {
  const handler = inProcessPaymentHandler(endpoint, secretArn, cache);
  return () => handler(event);
}
