/**
 * A loopback port whose listener never accepts: a worker thread listens with a small backlog, posts its port and
 * blocks its event loop until closed, so nothing ever accepts. Once the kernel's accept queue holds the few
 * connections it takes, the next connection's SYN is dropped and its connect never completes: what a host that
 * stopped answering looks like to a client, without leaving the loopback interface.
 */
import { connect, type Socket } from 'node:net';
import { Worker } from 'node:worker_threads';

export interface UnacceptingServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  close(): Promise<void>;
}

/** The worker: listens, says its port, and waits on the shared word until told to stop (then its loop runs again). */
const LISTENER = `
const { createServer } = require('node:net');
const { parentPort, workerData } = require('node:worker_threads');
const server = createServer();
server.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  parentPort.postMessage(server.address().port);
  Atomics.wait(new Int32Array(workerData), 0, 0);
  process.exit(0);
});
`;

/**
 * Whether a connection to `port` completes within `ms`; the socket is kept open (it holds a place in the queue).
 * The kernel completes a loopback handshake within microseconds of the connect; only this process's event loop can
 * be late (on a busy machine), and timers run before pending I/O, so the answer is read one turn after the timer,
 * once a completion already waiting has been delivered.
 */
function connects(port: number, ms: number, held: Socket[]): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    held.push(socket);
    socket.on('error', () => undefined);
    const timer = setTimeout(() => {
      setImmediate(() => {
        resolve(!socket.connecting);
      });
    }, ms);
    socket.once('connect', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

export async function startUnacceptingServer(): Promise<UnacceptingServer> {
  const stop = new SharedArrayBuffer(4);
  const worker = new Worker(LISTENER, { eval: true, workerData: stop });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('message', (message: number) => {
      resolve(message);
    });
  });
  // Fill the accept queue: once a connection does not complete, the queue is full and every later one hangs.
  const held: Socket[] = [];
  for (let filled = 0; await connects(port, 25, held); filled++) {
    if (filled > 64) throw new Error('the listener kept accepting connections');
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      for (const socket of held) socket.destroy();
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      const word = new Int32Array(stop);
      Atomics.store(word, 0, 1);
      Atomics.notify(word, 0);
      await exited;
    },
  };
}
