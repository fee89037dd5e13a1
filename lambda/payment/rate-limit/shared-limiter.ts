import { describeError } from '../../../shared/logger';
import { counterItemKey, ITEM_LINGER_SECONDS } from './counter-table';
import type { CounterStore, IncrementOutcome } from './counter-store';
import { CounterView } from './counter-view';
import { LocalWindowCounts } from './local-counts';
import {
  LIMITER_WORST_ADDED_MS,
  wholeSeconds,
  type LimitDecision,
  type LimiterFailure,
  type RateLimiter,
} from './limiter';
import { StoreBreaker } from './store-breaker';
import { appWindowAt, windowLengthMs, type RateLimit } from './window';
import { boundedMemo } from './bounded-memo';

/**
 * One item takes about 1,000 writes a second (DynamoDB's per-partition limit), and a window's count is one item. An
 * app whose limit is above this many requests a second is counted on several items per window (its stripes), each
 * admitting an equal part. Each item then takes at most this many counted writes a second, and, from the environments that take
 * part in a flooded window (counter-view.ts), about twice as many refused ones: 600 a second at most, well below the
 * item's 1,000, with room for the environments a flood newly reaches.
 */
export const REQUESTS_PER_SECOND_PER_ITEM = 200;

/**
 * How many items (stripes) an app's window is spread over, and what each admits (stripes differ by at most one).
 * A stripe, as in a striped counter: one count split over several cells so that no one cell is hot. ("Shard" means a
 * key registry secret only.)
 */
export const counterStripes: (limit: RateLimit) => CounterStripes = boundedMemo(
  1_024,
  (limit) => `${limit.perSecond}/${limit.burst}`,
  (limit) => {
    const count = Math.min(
      limit.burst,
      Math.max(1, Math.ceil(limit.perSecond / REQUESTS_PER_SECOND_PER_ITEM)),
    );
    const base = Math.floor(limit.burst / count);
    const extra = limit.burst % count;
    return {
      count,
      capacities: Array.from({ length: count }, (_, stripe) => base + (stripe < extra ? 1 : 0)),
    };
  },
);

export interface CounterStripes {
  readonly count: number;
  readonly capacities: readonly number[];
}

/**
 * Sending again is safe only for a call that never reached the store, and worth it only with this much of the
 * budget left for a whole attempt.
 */
const MIN_RESEND_MS = 30;
/** Views of counters not asked about for this long are dropped (their flood, if any, is over: QUIET_MS). */
const VIEW_IDLE_MS = 60_000;

/** The store call that makes a decision, within the budget it is given. */
interface StoreCall {
  readonly ask: (budget: AbortSignal) => Promise<LimitDecision>;
}

/** A decision this environment made alone, or the store call that makes it. */
type CheckStep = LimitDecision | StoreCall;

export interface SharedRateLimiterOptions {
  readonly store: CounterStore;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
  /** Picks one of an app's items and rolls for taking part in a window; injectable for tests. Default Math.random. */
  readonly random?: () => number;
  /**
   * The check's time budget: the most the limiter may add to a request, every store call included. Default
   * LIMITER_WORST_ADDED_MS (150 ms); longer only where set explicitly (RATE_LIMIT_DEADLINE_MS: the local server, tests
   * against an emulator).
   */
  readonly budgetMs?: number;
  /**
   * What the caller does when the shared count cannot answer (appRateLimitFailure). Only with `local` does each
   * environment accept at most the burst in a window, its own count's acceptances and the store's together (with
   * `open` or `closed` the local decisions are not used, so they are no acceptances to count). Default: none of
   * that; the decisions still carry what the local count says.
   */
  readonly failure?: LimiterFailure;
}

/**
 * The limit shared by every execution environment: one count per app and window (window.ts) in a counter store,
 * raised by a conditional increment, so no two environments can admit the same slot. The rules:
 *
 * - Counted once. The increment is sent once: a write that may have landed (no answer in time) is never resent, so
 *   a request is never counted twice; the request is then answered as the store being unavailable (it goes on, or
 *   gets 503). What that costs when an answer is lost: if the write had landed, the count holds a request that
 *   went on anyway (failing open: exact) or that got 503 (failing closed: the app loses that one slot of its
 *   window); if it had not, the request went on uncounted (failing open: one over). Only a call that never reached
 *   the store (the connection was refused or not made) is sent again, once, when the budget still holds a whole
 *   attempt.
 * - At most one call per request, and none for a window known full or sat out (counter-view.ts).
 * - A throttled counter means "limited" when this environment has seen its window full this window or the last
 *   (the item is busy with its own app's flood), and the store failing otherwise, for that counter until its window
 *   ends: a calm app is never refused because another app's item is hot.
 * - A failing store opens a breaker (store-breaker.ts): then no call, one probe a second.
 * - Whenever the shared count cannot answer (past the budget, failing, the breaker open), the decision carries what
 *   this environment's own count says (`local`): it counts every request it accepted, so failing `local` admits at
 *   most the app's burst per window here, and the app at most environments × its limit in all. Failing `local`
 *   (options.failure), one environment never accepts more than the burst in a window: once its own count has
 *   admitted the rest of it while the store was slow, the app is refused there for the rest of the window, without a
 *   call, even once the store answers again (the local decisions never add to the store's).
 * - The whole check ends within its budget (LIMITER_WORST_ADDED_MS, 150 ms), whatever the store does: one
 *   AbortSignal.timeout per check, passed to the store and from it to the client and the transport.
 */
export class SharedRateLimiter implements RateLimiter {
  private readonly store: CounterStore;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly budgetMs: number;
  /** Failing local: one environment accepts at most the burst in a window (SharedRateLimiterOptions.failure). */
  private readonly capsLocally: boolean;
  readonly breaker: StoreBreaker;
  /**
   * What this environment knows of each counter item, keyed with the limit (its window length and the item's
   * capacity): the memory of a full window never outlives a changed limit, which asks the store at once.
   */
  private readonly views = new Map<string, CounterView>();
  /**
   * This environment's own count of each app's window: every request it accepted, through the shared count or
   * without it, and at least what the shared count last said the window holds. When the shared count cannot
   * answer, it decides (`local`, for appRateLimitFailure=local).
   */
  private readonly localCounts = new LocalWindowCounts();
  private lastSweepAt: number;

  constructor(options: SharedRateLimiterOptions) {
    this.store = options.store;
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.budgetMs = options.budgetMs ?? LIMITER_WORST_ADDED_MS;
    this.capsLocally = options.failure === 'local';
    this.breaker = new StoreBreaker(this.now);
    this.lastSweepAt = this.now();
  }

  async check(appId: string, limit: RateLimit): Promise<LimitDecision> {
    const startedAt = this.now();
    this.sweep(startedAt);
    const step = this.plannedStep(appId, limit, startedAt);
    // Most checks in a flood are decided without a call: those await nothing.
    const shared = 'ask' in step ? await this.asked(step) : step;
    switch (shared.kind) {
      case 'accepted':
        // Failing local, never more than the burst from one environment in a window, whatever its own count admitted
        // meanwhile (a second check of one app under way at once: not in Lambda, which serves one at a time).
        if (this.capsLocally && this.localCounts.spent(appId, limit, startedAt)) {
          return { kind: 'limited', retryAfterSeconds: shared.resetSeconds };
        }
        this.localCounts.note(appId, limit, startedAt, shared.remaining);
        return shared;
      case 'limited':
        return shared;
      case 'unavailable':
        return { ...shared, local: this.localCounts.admit(appId, limit, startedAt) };
    }
  }

  private plannedStep(appId: string, limit: RateLimit, startedAt: number): CheckStep {
    try {
      return this.planCheck(appId, limit, startedAt);
    } catch (error) {
      return { kind: 'unavailable', error: describeError(error) };
    }
  }

  /** What the shared count says, within the budget. */
  private async asked(step: StoreCall): Promise<LimitDecision> {
    try {
      return await step.ask(AbortSignal.timeout(this.budgetMs));
    } catch (error) {
      return { kind: 'unavailable', error: describeError(error) };
    }
  }

  /**
   * The decision, when this environment can make it alone (a window known full or sat out, an item throttled
   * earlier in it, the breaker open), or the store call that makes it: only that part runs within the budget.
   */
  private planCheck(appId: string, limit: RateLimit, now: number): CheckStep {
    const lengthMs = windowLengthMs(limit);
    const window = appWindowAt(appId, limit, now);
    const { count, capacities } = counterStripes(limit);
    const stripe = count === 1 ? 0 : Math.floor(this.random() * count);
    const capacity = capacities[stripe] ?? window.capacity;
    // One view per item: each stripe of a busy app fills, and is thinned, on its own.
    const view = this.viewOf(`${appId}|${stripe}|${lengthMs}|${capacity}`, lengthMs);
    const limited: LimitDecision = { kind: 'limited', retryAfterSeconds: wholeSeconds(window.endMs - now) };

    view.noteRequest(window.index, now, this.random);
    if (view.knownFull(window.index) || view.sitsOut()) return limited;
    const throttled = view.knownThrottled(window.index);
    if (throttled !== undefined) {
      return {
        kind: 'unavailable',
        error: `${throttled} (earlier in this window; not asked again until it ends)`,
      };
    }
    // Its own count admitted the rest of the window while the store was slow, and the store would be asked again:
    // nothing more here, and no call. (While the breaker is open, or the item throttled, the request is the store
    // being unavailable, and counts so.)
    if (this.capsLocally && !this.breaker.isOpen() && this.localCounts.spent(appId, limit, now))
      return limited;
    const admission = this.breaker.admit();
    if (!admission.call) return { kind: 'unavailable', error: admission.reason };

    const firstCall = view.beginCall();
    const item = {
      key: counterItemKey(appId, count === 1 ? undefined : stripe, window.index),
      capacity,
      expiresAtSeconds: Math.ceil(window.endMs / 1000) + ITEM_LINGER_SECONDS,
    };
    return {
      ask: async (budget) => {
        const outcome = await this.incrementOnce(item, { startedAt: now, budget, probe: admission.probe });
        return this.decisionOf(outcome, {
          view,
          window: window.index,
          windowEndMs: window.endMs,
          capacity,
          stripes: count,
          firstCall,
          limited,
        });
      },
    };
  }

  /** What the store's answer means for the request, and for what this environment knows. */
  private decisionOf(
    outcome: IncrementOutcome,
    call: {
      readonly view: CounterView;
      readonly window: number;
      readonly windowEndMs: number;
      readonly capacity: number;
      readonly stripes: number;
      readonly firstCall: boolean;
      readonly limited: LimitDecision;
    },
  ): LimitDecision {
    const { view, window, windowEndMs, capacity, stripes, firstCall, limited } = call;
    switch (outcome.kind) {
      case 'counted': {
        this.breaker.record({ failed: false });
        view.counted(window, outcome.used, capacity, firstCall);
        // What the app may still make at once in this window: this stripe's capacity left, times the stripes.
        return {
          kind: 'accepted',
          remaining: Math.max(0, capacity - outcome.used) * stripes,
          resetSeconds: wholeSeconds(windowEndMs - this.now()),
        };
      }
      case 'full':
        this.breaker.record({ failed: false });
        view.full(window, firstCall);
        return limited;
      case 'throttled':
        if (view.throttled(window, firstCall, outcome.error)) {
          this.breaker.record({ failed: false });
          return limited;
        }
        this.breaker.record({ failed: true, error: outcome.error });
        return { kind: 'unavailable', error: outcome.error };
      case 'failed':
      case 'unsent':
        this.breaker.record({ failed: true, error: outcome.error });
        return { kind: 'unavailable', error: outcome.error };
    }
  }

  /**
   * The one increment, sent again only if it never reached the store and the budget allows: never while probing
   * the breaker, which allows one call. Both calls share the check's one budget.
   */
  private async incrementOnce(
    item: { readonly key: string; readonly capacity: number; readonly expiresAtSeconds: number },
    call: { readonly startedAt: number; readonly budget: AbortSignal; readonly probe: boolean },
  ): Promise<IncrementOutcome> {
    const first = await this.store.increment({ ...item, signal: call.budget });
    const leftMs = call.startedAt + this.budgetMs - this.now();
    if (first.kind !== 'unsent' || call.probe || call.budget.aborted || leftMs < MIN_RESEND_MS) return first;
    return this.store.increment({ ...item, signal: call.budget });
  }

  /**
   * Drops, once a minute, the views of counters idle for a minute and the local counts of windows that ended: the
   * maps hold the apps in use, not every one.
   */
  private sweep(now: number): void {
    if (now - this.lastSweepAt <= VIEW_IDLE_MS) return;
    this.lastSweepAt = now;
    for (const [key, view] of this.views) {
      if (now - view.lastSeenAt > VIEW_IDLE_MS) this.views.delete(key);
    }
    this.localCounts.sweep(now);
  }

  private viewOf(key: string, lengthMs: number): CounterView {
    let view = this.views.get(key);
    if (view === undefined) {
      view = new CounterView(lengthMs);
      this.views.set(key, view);
    }
    return view;
  }
}
