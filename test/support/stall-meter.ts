/**
 * Time this process was not running: a timer that should fire every few milliseconds is late by the time the
 * process was descheduled or paused (a loaded machine, a garbage collection). A bound on how soon the code under
 * test acts is a bound on its own waiting; time in which nothing in this process could run is not its to answer for.
 * On an idle machine the meter reads about 0, so the bound is unchanged there.
 */
export interface StallMeter {
  /** Milliseconds, within [fromEpoch, toEpoch], that fell in a stall. */
  stalledBetween(fromEpoch: number, toEpoch: number): number;
  stop(): void;
}

const TICK_MS = 5;
/** Lateness below this is a timer's ordinary jitter, not a stall. */
const STALL_THRESHOLD_MS = 20;

export function startStallMeter(): StallMeter {
  const stalls: { from: number; to: number }[] = [];
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    if (now - last - TICK_MS > STALL_THRESHOLD_MS) stalls.push({ from: last + TICK_MS, to: now });
    last = now;
  }, TICK_MS);
  // A scenario that throws before stop() must not hold the test process open.
  timer.unref();
  return {
    stalledBetween(fromEpoch, toEpoch) {
      return stalls.reduce(
        (total, stall) => total + Math.max(0, Math.min(stall.to, toEpoch) - Math.max(stall.from, fromEpoch)),
        0,
      );
    },
    stop() {
      clearInterval(timer);
    },
  };
}
