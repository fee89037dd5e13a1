/** Helpers for tests that run on jest's fake timers. */

/** Settles `promise` under fake timers, reporting when (in fake ms from now) it settled. */
export async function settleTiming<T>(promise: Promise<T>, stepMs = 10, limitMs = 10_000): Promise<number> {
  const state = { settled: false };
  promise.then(
    () => (state.settled = true),
    () => (state.settled = true),
  );
  let elapsed = 0;
  await jest.advanceTimersByTimeAsync(0);
  while (!state.settled && elapsed < limitMs) {
    await jest.advanceTimersByTimeAsync(stepMs);
    elapsed += stepMs;
  }
  return elapsed;
}
