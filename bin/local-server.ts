/**
 * `npm start`: the payment handler behind a local HTTP server on 127.0.0.1 (see tools/local-server/).
 * Exit codes: 0 after SIGINT/SIGTERM (or --help), 1 when it cannot start (one line on stderr says why) or did not
 * stop within 7 s of the signal, 2 for an argument it does not take: it is configured by its environment alone.
 */
import { LIMITER_WORST_ADDED_MS } from '../lambda/payment/rate-limit/limiter';
import { DEFAULT_LIMITER_FAILURE, LIMITER_FAILURES } from '../lambda/payment/rate-limit/settings';
import { ENV } from '../lambda/payment/settings';
import { describeError } from '../shared/logger';
import { KEY_STORE_ENV } from '../tools/common/key-store-env';
import { DEFAULT_KEYS_FILE, DEFAULT_PORT, LOCAL_ENV, LOCAL_HOST } from '../tools/local-server/local-settings';
import { startLocalServer, StartupError, type RunningLocalServer } from '../tools/local-server/run';

const HELP = `Usage: npm start [-- --help]

Serves POST /payment with the real handler on http://${LOCAL_HOST}:<PORT>, keys from a key file or a registry.
It takes no arguments: its settings are environment variables (docs/development.md).

Where the keys are (at most one; default the key file ${DEFAULT_KEYS_FILE}):
  ${KEY_STORE_ENV.keysFile.padEnd(24)}a key file, re-read when it changes
  ${KEY_STORE_ENV.registryFile.padEnd(24)}a local registry.json (npm run keys -- init)
  ${KEY_STORE_ENV.secretId.padEnd(24)}one Secrets Manager secret
  ${KEY_STORE_ENV.registry.padEnd(24)}a deployed registry's manifest secret
  ${KEY_STORE_ENV.stack.padEnd(24)}a deployed payment-api stack

Settings:
  ${LOCAL_ENV.port.padEnd(24)}the port (default ${DEFAULT_PORT}; 0: any free port)
  ${ENV.cacheTtlSeconds.padEnd(24)}how long keys are kept before they are read again
  ${ENV.logLevel.padEnd(24)}DEBUG, INFO, WARN or ERROR
  ${LOCAL_ENV.appRateLimit.padEnd(24)}every app's rate limit, requests per second (none without it)
  ${LOCAL_ENV.appRateBurst.padEnd(24)}its burst (default: the rate rounded up)
  ${LOCAL_ENV.rateLimitTable.padEnd(24)}count limits in this DynamoDB table instead of in memory
  ${LOCAL_ENV.appRateLimitFailure.padEnd(24)}with the table, when it does not answer: ${LIMITER_FAILURES.join(', ')} (default ${DEFAULT_LIMITER_FAILURE})
  ${LOCAL_ENV.rateLimitBudgetMs.padEnd(24)}with the table: how long it may take, ms (default ${LIMITER_WORST_ADDED_MS})
AWS settings (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL, ...) as for any AWS tool.
`;

/** `--help` (or `-h`) describes the settings; any other argument is refused, since none is read. */
function handleArguments(argv: readonly string[]): void {
  if (argv.length === 0) return;
  if (argv.some((arg) => arg === '--help' || arg === '-h')) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  process.stderr.write(`${PREFIX}: it takes no arguments, only environment variables: npm start -- --help\n`);
  process.exit(2);
}

/** How long in-flight requests get to finish after a stop signal. */
const SHUTDOWN_GRACE_MS = 5_000;

/**
 * After a stop signal the process exits by then whatever still runs: a stop signal always stops the server. (A read of
 * a FIFO put in the key file's place once held Node's thread pool, and with it the stop, for good.)
 */
const EXIT_DEADLINE_MS = SHUTDOWN_GRACE_MS + 2_000;

const PREFIX = 'payment-api local server';

async function main(): Promise<void> {
  handleArguments(process.argv.slice(2));
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
