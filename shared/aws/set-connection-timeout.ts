import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { AttemptError } from './attempt-errors';

/**
 * The connect timer of one attempt (as smithy's node-http-handler's set-connection-timeout.ts): the attempt fails
 * if its TCP (and TLS) connection is not made within `timeoutMs`. A request that failed here was never sent, so a
 * write cannot have landed: the error says so (`sent: false`). A reused keep-alive connection starts no timer.
 * `connected` is called once the connection is made (at once for a reused one). Returns what clears the timer.
 */
export function setConnectionTimeout(
  request: ClientRequest,
  timeoutMs: number,
  secure: boolean,
  connected: () => void,
  timedOut: (error: AttemptError) => void,
): () => void {
  let timer: NodeJS.Timeout | undefined;
  request.once('socket', (socket: Socket) => {
    if (!socket.connecting) {
      connected();
      return;
    }
    timer = setTimeout(() => {
      timedOut(new AttemptError(`no connection within the ${timeoutMs} ms connection time-out`, false));
    }, timeoutMs);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      connected();
    });
  });
  return () => {
    clearTimeout(timer);
  };
}
