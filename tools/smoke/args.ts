import { appIdProblem } from '../../shared/keys/app-id';
import { DIGEST_PREFIX, readStoredKey } from '../../shared/keys/key-material';
import { nonEmpty, parseArgsQuietly } from '../common/args';
import { UsageError } from '../common/exit';
import { stackNameProblem } from '../common/stack-name';
import type { Env } from '../common/tool-io';
import { REQUEST_TIMEOUT_MS } from './http-client';
import { readPaymentUrl } from './payment-url';
import { RUN_TIME_LIMIT_MS } from './runner';

/** The only place the key is read from with --url: never argv, which shows in shell history and `ps`. */
export const APP_KEY_ENV = 'APP_KEY';

export type SmokeTarget =
  | { readonly kind: 'url'; readonly url: URL; readonly appKey: string }
  | { readonly kind: 'stack'; readonly stackName: string };

export type SmokeInvocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'run'; readonly target: SmokeTarget; readonly appId: string; readonly json: boolean };

/** Bad command-line input. The message is one line and never echoes a value that could be a key. */
export class SmokeUsageError extends UsageError {
  override readonly name = 'SmokeUsageError';
}

export const USAGE = `Usage: npm run smoke -- (--url <payment-url> | --stack <stack-name>) --app-id <app-id> [--json]

Calls a deployed payment API about a dozen times and checks each answer against the contract: 200 with the
key; one identical 401 for a wrong key, an unknown app, a missing or a duplicated header; 415; 400; 405 with
Allow: POST; 404; JSON with Cache-Control: no-store every time. Prints one row per check. Each request has
${REQUEST_TIMEOUT_MS / 1000} s to answer, the whole run ${RUN_TIME_LIMIT_MS / 1000} s. A 429 with Retry-After (the app over its
rate limit) is waited out within that time and the request sent once more; its row says so.

Where the API is (exactly one):
  --url <url>        the /payment URL (https://<id>.execute-api.<region>.amazonaws.com/<stage>/payment);
                     the app's key comes from the ${APP_KEY_ENV} environment variable, never from the command line
  --stack <name>     a deployed payment-api stack: reads its PaymentUrl and KeysSecretArn outputs and the app's
                     newest plain key from that secret, with the standard AWS environment (AWS_PROFILE or
                     credentials, AWS_REGION); ${APP_KEY_ENV} is not read

Options:
  --app-id <id>      the App-id to call as (required)
  --json             one JSON document on standard output (run npm with -s to keep its banner off)
  -h, --help         this text

Exit codes: 0 every check passed, 1 a check failed (its row says why), the API could not be reached, the run's
time limit passed, or the stack could not be read, 2 bad usage. No key is ever printed.
`;

/** Flags people reach for that would put the key on the command line. */
const KEY_FLAGS = ['--app-key', '--key', '--api-key'];

function parseOptions(argv: readonly string[]) {
  const keyFlag = argv.find((argument) => KEY_FLAGS.includes(argument.split('=', 1)[0] ?? ''));
  if (keyFlag !== undefined) {
    throw new SmokeUsageError(
      `the key is never taken from the command line (it would show in shell history and the process list): ` +
        `put it in ${APP_KEY_ENV}, or use --stack to read it from the keys secret`,
    );
  }
  return parseArgsQuietly(
    {
      args: [...argv],
      // Positionals are refused below, without quoting them: parseArgs's own message would.
      allowPositionals: true,
      strict: true,
      options: {
        url: { type: 'string' },
        stack: { type: 'string' },
        'app-id': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    (message) => new SmokeUsageError(message),
  );
}

function readAppKey(env: Env): string {
  const appKey = nonEmpty(env[APP_KEY_ENV]);
  if (appKey === undefined) {
    throw new SmokeUsageError(`--url needs the app's key in the ${APP_KEY_ENV} environment variable`);
  }
  if (appKey.startsWith(DIGEST_PREFIX)) {
    throw new SmokeUsageError(
      `${APP_KEY_ENV} holds a ${DIGEST_PREFIX} digest; the smoke test needs the key itself`,
    );
  }
  const reading = readStoredKey(appKey);
  if (!reading.ok) throw new SmokeUsageError(`${APP_KEY_ENV} is not a usable key: ${reading.reason}`);
  return appKey;
}

function readTarget(
  flags: { readonly url: string | undefined; readonly stack: string | undefined },
  env: Env,
): SmokeTarget {
  const url = nonEmpty(flags.url);
  const stack = nonEmpty(flags.stack);
  if (url !== undefined && stack !== undefined) throw new SmokeUsageError('give --url or --stack, not both');
  if (stack !== undefined) {
    const problem = stackNameProblem(stack);
    if (problem !== undefined) throw new SmokeUsageError(`invalid --stack: ${problem}`);
    return { kind: 'stack', stackName: stack };
  }
  if (url === undefined)
    throw new SmokeUsageError('say where the API is: --url <payment-url> or --stack <stack-name>');
  const reading = readPaymentUrl(url);
  if (!reading.ok) throw new SmokeUsageError(`--url ${reading.problem}`);
  return { kind: 'url', url: reading.url, appKey: readAppKey(env) };
}

/** Turns argv (without node and the script) and the environment into a typed invocation, or throws SmokeUsageError. */
export function parseSmokeInvocation(argv: readonly string[], env: Env): SmokeInvocation {
  const { values, positionals } = parseOptions(argv);
  if (values.help) return { kind: 'help' };
  if (positionals.length > 0)
    throw new SmokeUsageError('unexpected argument: this command takes options only');

  const appId = nonEmpty(values['app-id']);
  if (appId === undefined) throw new SmokeUsageError('--app-id <app-id> is required');
  // Never echo the value: a key may have been pasted where the app id belongs.
  const problem = appIdProblem(appId);
  if (problem !== undefined) throw new SmokeUsageError(`invalid --app-id: ${problem}`);

  const target = readTarget({ url: values.url, stack: values.stack }, env);
  return { kind: 'run', target, appId, json: values.json };
}
