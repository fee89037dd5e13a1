/**
 * `npm start`: the payment handler behind a local HTTP server on 127.0.0.1 (see tools/local-server/).
 * Exit codes: 0 after SIGINT/SIGTERM, 1 when it cannot start (one line on stderr says why) or did not stop within
 * 7 s of the signal.
 */
import { describeError } from '../shared/logger';
import { startLocalServer, StartupError, type RunningLocalServer } from '../tools/local-server/run';

/** How long in-flight requests get to finish after a stop signal. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * After a stop signal the process exits by then whatever still runs: a stop signal always stops the server. (A read of
 * a FIFO put in the key file's place once held Node's thread pool, and with it the stop, for good.)
 */
const EXIT_DEADLINE_MS = SHUTDOWN_GRACE_MS + 2_000;

const PREFIX = 'payment-api local server';

async function main(): Promise<void> {
  let running: RunningLocalServer;
  try {
    running = await startLocalServer({
      env: process.env,
      cwd: process.cwd(),
      print: (line) => {
        console.log(line);
      },
    });
  } catch (error) {
    const message = error instanceof StartupError ? error.message : describeError(error);
    console.error(`${PREFIX}: ${message}`);
    process.exit(1);
  }

  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      console.log(`${PREFIX}: ${signal} again, closing open connections now`);
      running.forceStop();
      return;
    }
    stopping = true;
    setTimeout(() => {
      console.error(`${PREFIX}: not stopped within ${EXIT_DEADLINE_MS / 1000} s of ${signal}, exiting now`);
      process.exit(1);
    }, EXIT_DEADLINE_MS).unref();
    console.log(
      `${PREFIX}: ${signal} received, finishing in-flight requests (at most ${SHUTDOWN_GRACE_MS / 1000} s)`,
    );
    running.stop(SHUTDOWN_GRACE_MS).then(
      ({ forced }) => {
        console.log(`${PREFIX}: stopped${forced ? ' (connections still open were closed)' : ''}`);
        process.exit(0);
      },
      (error: unknown) => {
        console.error(`${PREFIX}: error while stopping: ${describeError(error)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}

void main();
