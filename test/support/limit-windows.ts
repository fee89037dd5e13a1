/**
 * The per-app limit counts in fixed windows, each app's offset by a hash of its id (lambda/payment/rate-limit/
 * window.ts). A test that spends an app's window and expects the next request refused would see it accepted if a
 * window ended in between, however long the windows; this runs such a test again in that case, with state that has
 * not been used.
 */
import { appWindowAt } from '../../lambda/payment/rate-limit/window';
import type { RateLimit } from '../../shared/keys/rate-limit';

/** An app and the limit it is counted under. */
export type AppLimit = readonly [appId: string, limit: RateLimit];

/**
 * Runs `act` and gives what it returned; if the clock crossed the end of a window of any of the apps `appsOf` names
 * for that attempt while it ran, runs it once more with attempt 1, for which `act` must use apps or a table not used
 * yet. Windows of a second or longer end at most once in a short test, so a second crossing fails the test.
 */
export async function withinOneWindow<T>(
  appsOf: (attempt: 0 | 1) => readonly AppLimit[],
  act: (attempt: 0 | 1) => Promise<T>,
): Promise<T> {
  for (const attempt of [0, 1] as const) {
    const before = Date.now();
    const result = await act(attempt);
    const after = Date.now();
    const sameWindow = ([appId, limit]: AppLimit): boolean =>
      appWindowAt(appId, limit, before).index === appWindowAt(appId, limit, after).index;
    if (appsOf(attempt).every(sameWindow)) return result;
  }
  throw new Error('the clock crossed the end of a rate-limit window twice within one test');
}
