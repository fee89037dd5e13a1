import type { RateLimit } from '../../../shared/keys/rate-limit';
import { wholeSeconds, type LocalDecision } from './limiter';
import { appWindowAt, windowLengthMs } from './window';

/**
 * An app's windows counted in this process's memory: the same windows as the shared count (window.ts, each app's
 * offset included), keyed by window length, so a limit changed within a window of the same length counts on from
 * what the window holds. Pure, its clock handed in. The local server's in-memory limiter counts with it, and the
 * shared limiter keeps one per execution environment for `appRateLimitFailure=local`: the requests it accepted
 * through the shared count are noted here too, so when the store cannot answer in time this environment admits at
 * most the app's burst in a window, those it already accepted included.
 */
export class LocalWindowCounts {
  private readonly counts = new Map<
    string,
    { readonly index: number; readonly endMs: number; used: number }
  >();

  /** Admits the request if this environment's count of the app's window is below its burst, and counts it. */
  admit(appId: string, limit: RateLimit, now: number): LocalDecision {
    const count = this.countOf(appId, limit, now);
    const secondsLeft = wholeSeconds(count.endMs - now);
    if (count.used >= limit.burst) return { kind: 'limited', retryAfterSeconds: secondsLeft };
    count.used++;
    return { kind: 'accepted', remaining: limit.burst - count.used, resetSeconds: secondsLeft };
  }

  /**
   * Counts a request the shared count accepted, so a local decision later in the window includes it; `remaining`
   * (what the shared count said is left) raises the count to what the whole window is known to hold, so a call that
   * times out late in a window admits only what the shared count had left, not a whole burst more.
   */
  note(appId: string, limit: RateLimit, now: number, remaining: number): void {
    const count = this.countOf(appId, limit, now);
    count.used = Math.max(count.used + 1, limit.burst - remaining);
  }

  /** Drops the counts of windows that have ended: the map holds the apps in use. */
  sweep(now: number): void {
    for (const [key, count] of this.counts) {
      if (count.endMs <= now) this.counts.delete(key);
    }
  }

  private countOf(appId: string, limit: RateLimit, now: number): { readonly endMs: number; used: number } {
    const window = appWindowAt(appId, limit, now);
    const key = `${appId}|${windowLengthMs(limit)}`;
    let count = this.counts.get(key);
    if (count === undefined || count.index !== window.index) {
      count = { index: window.index, endMs: window.endMs, used: 0 };
      this.counts.set(key, count);
    }
    return count;
  }
}
