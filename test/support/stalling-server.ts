import { createServer, type Server, type Socket } from 'node:net';
import { closeServer, listen } from './fault-proxy';

export type Stall =
  /** Accepts connections, reads requests, never answers. */
  | 'silent'
  /** Answers with status and headers at once, then sends the body one byte every 200 ms, forever. */
  | 'trickle';

export interface StallingServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Connections accepted so far: one per SDK attempt, since a timed-out attempt's socket is destroyed. */
  connections(): number;
  close(): Promise<void>;
}

const TRICKLE_INTERVAL_MS = 200;

/** A TCP server on a free loopback port that holds every request it gets. */
export async function startStallingServer(stall: Stall): Promise<StallingServer> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let accepted = 0;
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
    if (stall === 'silent') return;
    socket.once('data', () => {
      socket.write(
        'HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.1\r\nContent-Length: 1000000\r\n\r\n{',
      );
      const timer = setInterval(() => {
        if (socket.writable) socket.write(' ');
      }, TRICKLE_INTERVAL_MS);
      timers.add(timer);
      socket.on('close', () => {
        clearInterval(timer);
        timers.delete(timer);
      });
    });
  });
  const port = await listen(server, 0);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    connections: () => accepted,
    close: () => {
      for (const timer of timers) clearInterval(timer);
      return closeServer(server, sockets);
    },
  };
}
