import type { ClientRequest } from 'node:http';
import type { Socket } from 'node:net';
import { AttemptTimeoutError } from './attempt-errors';

/**
 * The connect timer of one attempt (as smithy's node-http-handler's set-connection-timeout.ts): the attempt fails
 * if its TCP (and TLS) connection is not made within `timeoutMs`. A request that failed here was never sent, so a
 * write cannot have landed: the error says so (`sent: false`). A reused keep-alive connection starts no timer.
 * `connected` is told once the connection is made (at once for a reused one). Returns what clears the timer.
 */
export function setConnectionTimeout(
  request: ClientRequest,
  options: { readonly timeoutMs: number; readonly secure: boolean },
  on: { connected(): void; timedOut(error: AttemptTimeoutError): void },
): () => void {
  let timer: NodeJS.Timeout | undefined;
  request.once('socket', (socket: Socket) => {
    if (!socket.connecting) {
      on.connected();
      return;
    }
    timer = setTimeout(() => {
      on.timedOut(
        new AttemptTimeoutError(
          `did not establish a connection within the ${options.timeoutMs} ms connection time-out`,
          false,
        ),
      );
    }, options.timeoutMs);
    socket.once(options.secure ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      on.connected();
    });
  });
  return () => {
    clearTimeout(timer);
  };
}
