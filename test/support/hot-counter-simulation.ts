/**
 * One app flooded from many execution environments, against a store that throttles any item past DynamoDB's
 * per-item write rate: the limiter's own code (SharedRateLimiter), one instance per environment, on a simulated
 * clock, sharing one in-memory store (counter-store-double.ts). Each environment serves its requests one at a time
 * as Lambda does; the store answers at once. Shared by the unit test, which asserts the band and that nothing fails
 * open, and by the benchmark, which prints the figures.
 */
import type { LimitDecision } from '../../lambda/payment/rate-limit/limiter';
import {
  counterStripes,
  REQUESTS_PER_SECOND_PER_ITEM,
  SharedRateLimiter,
} from '../../lambda/payment/rate-limit/shared-limiter';
import { appWindowAt } from '../../lambda/payment/rate-limit/window';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { CounterStoreDouble } from './counter-store-double';

export interface HotCounterScenario {
  readonly environments: number;
  /** The flooded app's limit. */
  readonly limit: RateLimit;
  /** Requests a second the flood sends each environment it has reached (Poisson arrivals). */
  readonly perEnvironmentPerSecond: number;
  /**
   * The flood reaches each environment at an instant drawn evenly from [0, spreadMs): 0 when it reaches them all at
   * once; a few seconds as a client's retries build up, or as Lambda brings environments into service.
   */
  readonly spreadMs: number;
  readonly durationMs: number;
  /** A calm app beside it: its own limit, and what it sends, all environments together (Poisson, spread evenly). */
  readonly calm: { readonly limit: RateLimit; readonly perSecond: number };
  /** DynamoDB's per-item ceiling. */
  readonly writesPerSecondPerItem: number;
  readonly seed: number;
}

export interface HotCounterReport {
  /** The flooded app's accepted requests in each whole second from the start. */
  readonly acceptedPerSecond: readonly number[];
  readonly floodRequests: number;
  /** Checks answered "unavailable", per whole second: the requests that would have failed open (or closed). */
  readonly unavailablePerSecond: readonly number[];
  /** Store calls the store throttled (they wrote nothing), per whole second. */
  readonly throttledPerSecond: readonly number[];
  /** The most writes one item took in one second, and the item. */
  readonly peak: { readonly item: string; readonly writes: number };
  /** Writes (counted and refused) that reached the store, per whole second from the start. */
  readonly writesPerSecond: readonly number[];
  readonly calmRequests: number;
  readonly calmRefused: number;
}

/** DynamoDB's per-item ceiling, where the store double throttles. */
export const DYNAMODB_WRITES_PER_SECOND_PER_ITEM = 1_000;

/** 1,000 environments, 10 requests a second each (10,000 a second in all), reaching them over 3 s. */
const THOUSAND_ENVIRONMENTS: HotCounterScenario = {
  environments: 1_000,
  limit: { perSecond: 100, burst: 100 },
  perEnvironmentPerSecond: 10,
  spreadMs: 3_000,
  durationMs: 12_000,
  calm: { limit: { perSecond: 10, burst: 10 }, perSecond: 2 },
  writesPerSecondPerItem: DYNAMODB_WRITES_PER_SECOND_PER_ITEM,
  seed: 17,
};

/**
 * What a run shows: `within` the bound (no item reaches the ceiling, nothing fails open), `first-window` (a flood
 * reaching every environment in one instant: the first window costs a write per environment, then within), or
 * `beyond` it (environments newly reached faster than the bound allows: printed, not asserted).
 */
export type HotCounterExpectation = 'within' | 'first-window' | 'beyond';

/** The runs the unit test asserts and the benchmark prints (the benchmark runs them longer). */
export const HOT_COUNTER_RUNS: readonly {
  readonly label: string;
  readonly scenario: HotCounterScenario;
  readonly expectation: HotCounterExpectation;
}[] = [
  {
    label: '100/s, reaching the environments over 3 s',
    scenario: THOUSAND_ENVIRONMENTS,
    expectation: 'within',
  },
  {
    label: `${REQUESTS_PER_SECOND_PER_ITEM}/s (the most one item counts), over 3 s`,
    scenario: {
      ...THOUSAND_ENVIRONMENTS,
      limit: { perSecond: REQUESTS_PER_SECOND_PER_ITEM, burst: REQUESTS_PER_SECOND_PER_ITEM },
    },
    expectation: 'within',
  },
  {
    label: '1,000/s (five items), over 3 s',
    scenario: { ...THOUSAND_ENVIRONMENTS, limit: { perSecond: 1_000, burst: 1_000 } },
    expectation: 'within',
  },
  {
    label: '100/s, one request a second per environment, over 3 s',
    scenario: { ...THOUSAND_ENVIRONMENTS, perEnvironmentPerSecond: 1 },
    expectation: 'within',
  },
  {
    label: '100/s, reaching all 1,000 in the same instant',
    scenario: { ...THOUSAND_ENVIRONMENTS, spreadMs: 0 },
    expectation: 'first-window',
  },
  {
    label: '100/s, 2,000 environments reached over 6 s, 5 a second each',
    scenario: { ...THOUSAND_ENVIRONMENTS, environments: 2_000, spreadMs: 6_000, perEnvironmentPerSecond: 5 },
    expectation: 'beyond',
  },
];

/** Offered per environment: a modest flood, and one as fast as a process goes (10,000 checks a second). */
export const FILL_RATES = [100, 10_000] as const;
/** From one environment to a fleet. */
export const FILL_ENVIRONMENTS = [1, 4, 16, 1_000] as const;

/**
 * Every window filled: one app at 10 a second (windows of 1 s, 10 requests each) offered far more than that from
 * 1 to 1,000 environments, each at 100 or 10,000 requests a second; the flood reaches the environments at once,
 * or, for 1,000, over 3 s (a flood reaching 1,000 in one instant throttles its first window: see HOT_COUNTER_RUNS).
 */
export const WINDOW_FILL_RUNS: readonly {
  readonly label: string;
  readonly scenario: HotCounterScenario;
}[] = FILL_ENVIRONMENTS.flatMap((environments) =>
  FILL_RATES.map((perEnvironmentPerSecond) => ({
    label: `${environments.toLocaleString('en')} environment${environments === 1 ? '' : 's'}, ${perEnvironmentPerSecond.toLocaleString('en')}/s each`,
    scenario: {
      ...THOUSAND_ENVIRONMENTS,
      environments,
      limit: { perSecond: 10, burst: 10 },
      perEnvironmentPerSecond,
      spreadMs: environments === 1_000 ? 3_000 : 0,
      durationMs: 12_000,
    },
  })),
);

/** mulberry32: a small seeded generator, so a run is the same every time. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = state;
    value = Math.imul(value ^ (value >>> 15), value | 1);
    value ^= value + Math.imul(value ^ (value >>> 7), value | 61);
    return ((value ^ (value >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const FLOOD_APP = 'flooded-app';
const CALM_APP = 'calm-app';
/** The simulated clock starts here (epoch milliseconds), in the middle of nowhere in particular. */
const START_MS = 1_800_000_000_000;

interface Arrival {
  readonly at: number;
  readonly environment: number;
  readonly app: typeof FLOOD_APP | typeof CALM_APP;
}

/** The arrivals still to come, earliest first: one per environment's flood, and the calm app's next. */
class ArrivalQueue {
  private readonly heap: Arrival[] = [];

  get size(): number {
    return this.heap.length;
  }

  push(arrival: Arrival): void {
    const heap = this.heap;
    heap.push(arrival);
    for (let index = heap.length - 1; index > 0;) {
      const parent = (index - 1) >> 1;
      if ((heap[parent] as Arrival).at <= arrival.at) break;
      heap[index] = heap[parent] as Arrival;
      heap[parent] = arrival;
      index = parent;
    }
  }

  pop(): Arrival {
    const heap = this.heap;
    const first = heap[0] as Arrival;
    const last = heap.pop() as Arrival;
    if (heap.length > 0) {
      heap[0] = last;
      for (let index = 0; ;) {
        const left = 2 * index + 1;
        const right = left + 1;
        let smallest = index;
        if (left < heap.length && (heap[left] as Arrival).at < (heap[smallest] as Arrival).at)
          smallest = left;
        if (right < heap.length && (heap[right] as Arrival).at < (heap[smallest] as Arrival).at)
          smallest = right;
        if (smallest === index) break;
        [heap[index], heap[smallest]] = [heap[smallest] as Arrival, heap[index] as Arrival];
        index = smallest;
      }
    }
    return first;
  }
}

/**
 * Runs the scenario: each environment's flood is a Poisson stream of its own, drawn as it goes. Where an environment
 * answered a flood request without a store call (its window known full, or sat out), every later request of it in
 * that window gets the same answer without a call (nothing it knows can change until the window ends): those are
 * counted, not checked one by one, so 1,000 environments at 10,000 requests a second each run in moments. (Only for
 * an app on one item: with several, the next request may land on another stripe.)
 */
export async function simulateHotCounter(scenario: HotCounterScenario): Promise<HotCounterReport> {
  const random = seeded(scenario.seed);
  let clock = START_MS;
  const now = (): number => clock;
  const store = new CounterStoreDouble({ now, writesPerSecondPerItem: scenario.writesPerSecondPerItem });
  const limiters = Array.from(
    { length: scenario.environments },
    (_, environment) =>
      new SharedRateLimiter({ store, now, random: seeded(scenario.seed * 7_919 + environment + 1) }),
  );
  const seconds = Math.ceil(scenario.durationMs / 1000);
  const perSecond = (): number[] => Array.from({ length: seconds }, () => 0);
  const acceptedPerSecond = perSecond();
  const unavailablePerSecond = perSecond();
  const gap = (rate: number): number => (-Math.log(1 - random()) * 1000) / rate;
  const floodRate = scenario.perEnvironmentPerSecond;
  const oneItem = counterStripes(scenario.limit).count === 1;
  const queue = new ArrivalQueue();
  for (let environment = 0; environment < scenario.environments; environment++) {
    queue.push({ at: random() * scenario.spreadMs + gap(floodRate), environment, app: FLOOD_APP });
  }
  queue.push({
    at: gap(scenario.calm.perSecond),
    environment: Math.floor(random() * scenario.environments),
    app: CALM_APP,
  });
  let floodRequests = 0;
  let calmRequests = 0;
  let calmRefused = 0;
  while (queue.size > 0) {
    const arrival = queue.pop();
    if (arrival.at >= scenario.durationMs) continue;
    clock = START_MS + arrival.at;
    const limit = arrival.app === FLOOD_APP ? scenario.limit : scenario.calm.limit;
    const callsBefore = store.calls.length;
    const decision: LimitDecision = await (limiters[arrival.environment] as SharedRateLimiter).check(
      arrival.app,
      limit,
    );
    const second = Math.floor(arrival.at / 1000);
    if (decision.kind === 'unavailable')
      unavailablePerSecond[second] = (unavailablePerSecond[second] ?? 0) + 1;
    if (arrival.app === CALM_APP) {
      calmRequests++;
      if (decision.kind === 'limited') calmRefused++;
      queue.push({
        at: arrival.at + gap(scenario.calm.perSecond),
        environment: Math.floor(random() * scenario.environments),
        app: CALM_APP,
      });
      continue;
    }
    floodRequests++;
    if (decision.kind === 'accepted') acceptedPerSecond[second] = (acceptedPerSecond[second] ?? 0) + 1;
    let next = arrival.at + gap(floodRate);
    if (oneItem && decision.kind === 'limited' && store.calls.length === callsBefore) {
      const windowEnd = appWindowAt(FLOOD_APP, limit, clock).endMs - START_MS;
      if (next < windowEnd) {
        floodRequests += Math.round(
          ((Math.min(windowEnd, scenario.durationMs) - arrival.at) * floodRate) / 1000,
        );
        next = windowEnd + gap(floodRate);
      }
    }
    queue.push({ at: next, environment: arrival.environment, app: FLOOD_APP });
  }
  const bySecond = (times: Iterable<number>): number[] => {
    const counts = perSecond();
    for (const at of times) {
      const second = Math.floor((at - START_MS) / 1000);
      counts[second] = (counts[second] ?? 0) + 1;
    }
    return counts;
  };
  return {
    acceptedPerSecond,
    floodRequests,
    unavailablePerSecond,
    throttledPerSecond: bySecond(
      store.calls.filter((call) => call.outcome.kind === 'throttled').map((call) => call.at),
    ),
    writesPerSecond: bySecond([...store.writes.values()].flat()),
    peak: store.peakWritesPerSecond(),
    calmRequests,
    calmRefused,
  };
}
