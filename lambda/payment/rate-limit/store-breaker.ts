/**
 * A circuit breaker in front of the counter store, one per execution environment (module scope in the Lambda).
 *
 * Closed, every check that needs the store calls it. It opens when BREAKER_FAILURES_TO_OPEN calls in a row failed:
 * a store that times out, refuses the connection, answers 5xx or refuses the write (AccessDenied, ResourceNotFound),
 * or throttles a counter this environment has no reason to think busy (the whole table throttled). A slow answer now
 * and then, past the 150 ms budget, does not open it (that request alone fails open or closed); a store that
 * fails most of its calls does, within three requests.
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
/** Failed calls in a row that open the breaker. */
export const BREAKER_FAILURES_TO_OPEN = 3;

export type Admission =
  /** Call the store; `probe` when the breaker is open and this call tests it (it must then be the only one). */
  | { readonly call: true; readonly probe: boolean }
  /** Do not call: the breaker is open. `reason` says since when and why, for the log. */
  | { readonly call: false; readonly reason: string };

export class StoreBreaker {
  /** Calls that failed in a row, up to the last. */
  private failuresInARow = 0;
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
        this.failuresInARow = 0;
      }
      return;
    }
    this.failuresInARow = outcome.failed ? this.failuresInARow + 1 : 0;
    if (outcome.failed && this.failuresInARow >= BREAKER_FAILURES_TO_OPEN) {
      this.open = {
        nextProbeAt: this.now() + BREAKER_PROBE_INTERVAL_MS,
        lastError: outcome.error,
        probing: false,
      };
    }
  }
}
