/**
 * How often one execution environment may start fetching keys while Secrets Manager fails, counted across every
 * shard together.
 *
 * Each shard's KeyCache spaces its own retries (one fetch in flight, the next no sooner than 500 ms after a failed
 * one started), which bounds the calls per shard; with 64 shards and a flood of app ids naming them all, that was
 * 64 times the bound (116-135 calls a second from one environment). So while the environment has reason to think
 * Secrets Manager is failing, the fetches it starts are spaced across all shards: at most one per `spacingMs`
 * (500 ms), so at most 2 starts a second, 2 attempts each, 4 calls a second, whichever shards the requests name.
 * The fetch that raised the suspicion (it failed, or is overdue), and any started alongside it, are not counted:
 * the short window at the start of an outage that can catch one fetch more. Not counting it keeps one failing shard
 * from holding up the first read of another (a reshard's previous home, read right after its new home failed).
 *
 * Reason to think it failing, at the moment a fetch would start:
 * - the last fetch that ended, on any shard, failed;
 * - a fetch has been under way longer than `overdueAfterMs` (250 ms, the wait a request gives a refresh): a healthy
 *   Secrets Manager answers in tens of milliseconds, so one that has not is slow or black-holed, and fetches for
 *   other shards would only pile up behind the same fault before the first one fails.
 *
 * A shard's own retries are spaced by its KeyCache as before; across shards they are counted here only while the
 * environment suspects a fault, so once Secrets Manager answers again every shard recovers at once.
 *
 * Otherwise fetches start freely: a cold environment reads each shard its requests need at once, and a healthy
 * shard's TTL refresh never waits on another. A fetch that succeeds on any shard ends the suspicion, so one shard
 * that fails (deleted, malformed) costs the others nothing beyond an occasional 500 ms spacing.
 */
export interface FetchBudgetOptions {
  /** While failing, the least time between two fetch starts across all shards. @default 500 */
  readonly spacingMs?: number;
  /** A fetch under way longer than this makes the environment suspect a fault. @default 250 */
  readonly overdueAfterMs?: number;
  /** Injectable for tests. @default Date.now */
  readonly now?: () => number;
}

export const FETCH_BUDGET_DEFAULTS = { spacingMs: 500, overdueAfterMs: 250 } as const;

/** A fetch the budget let start: its owner says how it ended, once. */
export interface FetchTicket {
  /** `succeeded`: the source answered with usable keys. Later calls are ignored. */
  settled(succeeded: boolean): void;
}

interface Running {
  readonly startedAt: number;
  /** After this the fetch is abandoned by its cache (frozen, or never settling): no longer a sign of anything. */
  readonly abandonAt: number;
}

export class FetchBudget {
  private readonly spacingMs: number;
  private readonly overdueAfterMs: number;
  private readonly now: () => number;
  private readonly running = new Set<Running>();
  /** When the last fetch started while a fault was suspected: the next one then comes `spacingMs` after it. */
  private lastSpacedStart: number | undefined;
  private lastEndedInFailure = false;

  constructor(options: FetchBudgetOptions = {}) {
    this.spacingMs = options.spacingMs ?? FETCH_BUDGET_DEFAULTS.spacingMs;
    this.overdueAfterMs = options.overdueAfterMs ?? FETCH_BUDGET_DEFAULTS.overdueAfterMs;
    this.now = options.now ?? Date.now;
  }

  /**
   * How long from now until a fetch may start: 0 when it may start now; more while the environment suspects a fault
   * and another fetch started less than `spacingMs` ago.
   */
  waitMs(): number {
    const now = this.now();
    if (this.lastSpacedStart === undefined || !this.suspectsFault(now)) return 0;
    return Math.max(0, this.lastSpacedStart + this.spacingMs - now);
  }

  /**
   * Counts a fetch starting now: one waitMs allowed, or one that must start whatever the budget says (a reload an
   * operator asked for). `abandonAfterMs`: how long its cache waits on it at most.
   */
  start(abandonAfterMs: number): FetchTicket {
    const now = this.now();
    if (this.suspectsFault(now)) this.lastSpacedStart = now;
    const running: Running = { startedAt: now, abandonAt: now + abandonAfterMs };
    this.running.add(running);
    let open = true;
    return {
      settled: (succeeded) => {
        if (!open) return;
        open = false;
        this.running.delete(running);
        this.lastEndedInFailure = !succeeded;
      },
    };
  }

  private suspectsFault(now: number): boolean {
    if (this.lastEndedInFailure) return true;
    for (const running of this.running) {
      if (now >= running.abandonAt) this.running.delete(running);
      else if (now - running.startedAt > this.overdueAfterMs) return true;
    }
    return false;
  }
}
