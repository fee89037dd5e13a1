import { abortedAttempt, type AttemptError } from './attempt-errors';

/**
 * The caller's budget on one attempt: the attempt ends as soon as `signal` aborts (at once if it already has). The
 * signal is the caller's own, made once for the whole call (AbortSignal.timeout of its budget, maybe joined with
 * AbortSignal.any): no layer below keeps a deadline of its own. `sent` tells, when it fires, whether the request
 * may have reached the service. Returns what stops listening.
 */
export function setAbortSignal(
  signal: AbortSignal,
  sent: () => boolean,
  aborted: (error: AttemptError) => void,
): () => void {
  const onAbort = (): void => {
    aborted(abortedAttempt(signal.reason, sent()));
  };
  if (signal.aborted) {
    onAbort();
    return () => undefined;
  }
  signal.addEventListener('abort', onAbort, { once: true });
  return () => {
    signal.removeEventListener('abort', onAbort);
  };
}
