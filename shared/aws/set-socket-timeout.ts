import type { ClientRequest } from 'node:http';
import { AttemptError } from './attempt-errors';

/**
 * The socket timer of one attempt (as smithy's node-http-handler's set-socket-timeout.ts): once the connection is
 * made, the attempt fails if it stays silent for `timeoutMs`, whether no answer starts or an answer stops midway.
 * The request had been sent (`sent: true`): a write may have landed. Node's own socket time-out, which Node clears
 * when the connection goes back to the keep-alive pool, so it never closes a connection the next call reuses.
 */
export function setSocketTimeout(
  request: ClientRequest,
  timeoutMs: number,
  timedOut: (error: AttemptError) => void,
): void {
  request.setTimeout(timeoutMs, () => {
    timedOut(new AttemptError(`silent for the ${timeoutMs} ms socket time-out`, true));
  });
}
