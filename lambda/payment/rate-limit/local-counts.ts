import type { RateLimit } from '../../../shared/keys/rate-limit';
import { wholeSeconds, type LocalDecision } from './limiter';
import { appWindowAt, windowLengthMs } from './window';

/**
 * An app's windows counted in this process's memory: the same windows as the shared count (window.ts, each app's
 * offset included), keyed by window length, so a limit changed within a window of the same length counts on from
 * what the window holds. Pure, its clock handed in. The local server's in-memory limiter counts with it, and the
 * shared limiter keeps one per execution environment for `appRateLimitFailure=local`.
 *
 * For the shared limiter each window has two counts:
 * - `accepted`: the requests this environment accepted in it, through the shared count or its own. Failing `local`,
 *   the shared limiter accepts nothing more in a window once it reaches the burst (`spent`), so the app gets at most
 *   environments × burst a window whatever the store does, and a window's local decisions never add to what the
 *   store granted here.
 * - `held`: at least `accepted`, and at least what the shared count last said the whole window holds (all
 *   environments together). A request the store cannot decide in time is admitted only while `held` is below the
 *   burst: a time-out late in a window admits what was left of it, not a whole burst more.
 */
export class LocalWindowCounts {
  private readonly counts = new Map<string, WindowCount>();

  /** Admits the request if this environment's count of the app's window is below its burst, and counts it. */
  admit(appId: string, limit: RateLimit, now: number): LocalDecision {
    const count = this.countOf(appId, limit, now);
    const secondsLeft = wholeSeconds(count.endMs - now);
    if (count.held >= limit.burst) return { kind: 'limited', retryAfterSeconds: secondsLeft };
    count.held++;
    count.accepted++;
    return { kind: 'accepted', remaining: limit.burst - count.held, resetSeconds: secondsLeft };
  }

  /**
   * Counts a request the shared count accepted; `remaining` (what it said is left) raises `held` to what the whole
   * window is known to hold, so a call that times out late in a window admits only what the shared count had left,
   * not a whole burst more.
   */
  note(appId: string, limit: RateLimit, now: number, remaining: number): void {
    const count = this.countOf(appId, limit, now);
    count.accepted++;
    count.held = Math.max(count.held + 1, limit.burst - remaining);
  }

  /** Whether this environment has accepted the app's whole burst in the current window. */
  spent(appId: string, limit: RateLimit, now: number): boolean {
    return this.countOf(appId, limit, now).accepted >= limit.burst;
  }

  /** Drops the counts of windows that have ended: the map holds the apps in use. */
  sweep(now: number): void {
    for (const [key, count] of this.counts) {
      if (count.endMs <= now) this.counts.delete(key);
    }
  }

  private countOf(appId: string, limit: RateLimit, now: number): WindowCount {
    const window = appWindowAt(appId, limit, now);
    const key = `${appId}|${windowLengthMs(limit)}`;
    let count = this.counts.get(key);
    if (count === undefined || count.index !== window.index) {
      count = { index: window.index, endMs: window.endMs, accepted: 0, held: 0 };
      this.counts.set(key, count);
    }
    return count;
  }
}

interface WindowCount {
  readonly index: number;
  readonly endMs: number;
  /** Requests this environment accepted in the window. */
  accepted: number;
  /** At least `accepted`, and at least what the shared count last said the window holds. */
  held: number;
}
