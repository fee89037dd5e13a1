/**
 * A circuit breaker in front of the counter store, one per execution environment (module scope in the Lambda).
 *
 * Closed, every check that needs the store calls it. It opens when BREAKER_FAILURES_TO_OPEN of the last
 * BREAKER_RECENT_CALLS calls failed: a store that times out, refuses the connection, answers 5xx or refuses the
 * write (AccessDenied, ResourceNotFound), or throttles a counter this environment has no reason to think busy (the
 * whole table throttled). One slow answer among successes does not open it; a store that fails half its calls does.
 *
 * Open, checks are answered at once, without a call: the request fails open or closed as configured, and counts in
 * RateLimiterUnavailable like any other. One check every BREAKER_PROBE_INTERVAL_MS is let through as a probe, alone;
 * its success closes the breaker, its failure keeps it open for another interval. So an environment makes at most one
 * store call a second while the store is down, however many requests it serves, and notices its recovery within a
 * second of it. (Unkey stops calling its store for 5 s once half its calls fail; a second costs one call, and keeps
 * the limit off for no longer than it must.)
 */

/** The time between two probes while the breaker is open. */
export const BREAKER_PROBE_INTERVAL_MS = 1_000;
/** The calls the breaker looks back on, and how many of them must have failed for it to open. */
export const BREAKER_RECENT_CALLS = 4;
export const BREAKER_FAILURES_TO_OPEN = 2;

export type Admission =
  /** Call the store; `probe` when the breaker is open and this call tests it (it must then be the only one). */
  | { readonly call: true; readonly probe: boolean }
  /** Do not call: the breaker is open. `reason` says since when and why, for the log. */
  | { readonly call: false; readonly reason: string };

export class StoreBreaker {
  /** The outcomes of the last calls, oldest first: true for a failure. */
  private recent: boolean[] = [];
  /** Set while the breaker is open: when the next probe may go, and what made it open. */
  private open: { nextProbeAt: number; lastError: string; probing: boolean } | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  isOpen(): boolean {
    return this.open !== undefined;
  }

  /** Whether this check may call the store. */
  admit(): Admission {
    const open = this.open;
    if (open === undefined) return { call: true, probe: false };
    const at = this.now();
    if (!open.probing && at >= open.nextProbeAt) {
      open.probing = true;
      open.nextProbeAt = at + BREAKER_PROBE_INTERVAL_MS;
      return { call: true, probe: true };
    }
    const wait = Math.max(0, open.nextProbeAt - at);
    return {
      call: false,
      reason:
        `rate limit store not called: the breaker is open (${open.lastError}); ` +
        (open.probing ? 'a probe is under way' : `next probe in ${wait} ms`),
    };
  }

  /** What a call that `admit` let through came to: a failure (with its error) or not. */
  record(outcome: { readonly failed: false } | { readonly failed: true; readonly error: string }): void {
    const open = this.open;
    if (open !== undefined) {
      open.probing = false;
      if (outcome.failed) {
        open.lastError = outcome.error;
      } else {
        this.open = undefined;
        this.recent = [];
      }
      return;
    }
    this.recent = [...this.recent, outcome.failed].slice(-BREAKER_RECENT_CALLS);
    if (outcome.failed && this.recent.filter(Boolean).length >= BREAKER_FAILURES_TO_OPEN) {
      this.open = {
        nextProbeAt: this.now() + BREAKER_PROBE_INTERVAL_MS,
        lastError: outcome.error,
        probing: false,
      };
    }
  }
}
