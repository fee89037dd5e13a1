/**
 * Settles as `work` settles, or with what `onTimeout` returns (or throws) once `ms` have passed, whichever comes
 * first. The timer is cleared either way, so it never holds the process open. The abandoned work is not cancelled:
 * it ends on its own bounds, and its outcome is ignored.
 */
export function raceWithTimeout<T, U>(work: Promise<T>, ms: number, onTimeout: () => U): Promise<T | U> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<U>((resolve, reject) => {
    timer = setTimeout(() => {
      try {
        resolve(onTimeout());
      } catch (error) {
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    }, ms);
  });
  return Promise.race([work, timeout]).finally(() => {
    clearTimeout(timer);
  });
}
