import { parseArgs } from 'node:util';
import { appIdProblem } from '../../shared/keys/app-id';
import { INVALID_KEY_ID_MESSAGE, isKeyId } from '../../shared/keys/key-material';
// The variables the Lambda and the local server read: one setting points the server and the CLI alike.
import { LOCAL_ENV } from '../local-server/local-settings';
import { ENV } from '../../lambda/payment/settings';
import { errorMessage } from '../../shared/errors';

export type Command =
  | { readonly name: 'list' }
  | { readonly name: 'add-app'; readonly appId: string; readonly hash: boolean }
  | { readonly name: 'rotate'; readonly appId: string; readonly hash: boolean }
  | { readonly name: 'revoke'; readonly appId: string; readonly keyId: string; readonly force: boolean }
  | { readonly name: 'remove-app'; readonly appId: string };

export type CommandName = Command['name'];

/** Where the keys live: a Secrets Manager secret (name or ARN) or the local server's key file. */
export type Target =
  { readonly kind: 'secret'; readonly secretId: string } | { readonly kind: 'file'; readonly path: string };

export type Invocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'run'; readonly command: Command; readonly target: Target; readonly json: boolean };

/** Bad command-line input. The message is one line and never echoes a value that could be a key. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  list                              every App-id with its key ids (never a key)
  add-app <app-id>                  a new app with one fresh key
  rotate <app-id>                   add a fresh key; the existing keys stay valid
  revoke <app-id> <key-id>          remove one key (the app's last key only with --force)
  remove-app <app-id>               remove an app and all its keys

Where the keys are (exactly one; a flag wins over the environment):
  --secret-id <id>                  Secrets Manager secret name or ARN (env ${ENV.secretId}); region,
                                    credentials and AWS_ENDPOINT_URL come from the standard AWS environment
  --file <path>                     the local server's key file (env ${LOCAL_ENV.keysFile})

Options:
  --hash                            add-app, rotate: store only sha256:<hex> of the new key
  --force                           revoke: allow removing the app's last key (the app goes with it)
  --json                            machine-readable output
  -h, --help                        this text

A new key is printed once, on standard output, and nowhere else. For --json, run npm with -s
(npm run -s keys -- ...) or call npx tsx bin/keys.ts, so npm's banner stays off standard output.
`;

const COMMAND_ARITY: Readonly<Record<CommandName, readonly string[]>> = {
  list: [],
  'add-app': ['<app-id>'],
  rotate: ['<app-id>'],
  revoke: ['<app-id>', '<key-id>'],
  'remove-app': ['<app-id>'],
};

function isCommandName(value: string): value is CommandName {
  return Object.hasOwn(COMMAND_ARITY, value);
}

function checkedAppId(value: string): string {
  // Never echo the value: an operator may have pasted a key where the app id belongs.
  const problem = appIdProblem(value);
  if (problem !== undefined) throw new UsageError(`invalid app id: ${problem}`);
  return value;
}

function checkedKeyId(value: string): string {
  if (!isKeyId(value)) {
    throw new UsageError(INVALID_KEY_ID_MESSAGE);
  }
  return value;
}

/** An environment variable set to '' counts as unset, as a flag given as '' does. */
export function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

function resolveTarget(
  flags: { readonly secretId: string | undefined; readonly file: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): Target {
  const secretId = nonEmpty(flags.secretId);
  const file = nonEmpty(flags.file);
  if (secretId !== undefined && file !== undefined)
    throw new UsageError('give --secret-id or --file, not both');
  if (secretId !== undefined) return { kind: 'secret', secretId };
  if (file !== undefined) return { kind: 'file', path: file };

  const envSecretId = nonEmpty(env[ENV.secretId]);
  const envFile = nonEmpty(env[LOCAL_ENV.keysFile]);
  if (envSecretId !== undefined && envFile !== undefined) {
    throw new UsageError(
      `both ${ENV.secretId} and ${LOCAL_ENV.keysFile} are set; pick one with --secret-id or --file`,
    );
  }
  if (envSecretId !== undefined) return { kind: 'secret', secretId: envSecretId };
  if (envFile !== undefined) return { kind: 'file', path: envFile };
  throw new UsageError(
    `no key store: give --secret-id <id> or --file <path> (or set ${ENV.secretId} or ${LOCAL_ENV.keysFile})`,
  );
}

function parseOptions(argv: readonly string[]) {
  try {
    return parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        'secret-id': { type: 'string' },
        file: { type: 'string' },
        hash: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (error) {
    // parseArgs names the offending option; keep its first sentence, which never holds an option's value.
    const message = errorMessage(error)?.split('. ')[0] ?? '';
    throw new UsageError(message.replace(/\s+/g, ' ').trim() || 'invalid arguments');
  }
}

/** Turns argv (without node and the script) into a typed invocation, or throws UsageError. */
export function parseInvocation(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
): Invocation {
  const { values, positionals } = parseOptions(argv);
  if (values.help) return { kind: 'help' };

  const [name, ...operands] = positionals;
  if (name === undefined) throw new UsageError('no command given; run with --help for usage');
  if (!isCommandName(name))
    throw new UsageError('unknown command; expected list, add-app, rotate, revoke or remove-app');

  const expected = COMMAND_ARITY[name];
  if (operands.length !== expected.length) {
    throw new UsageError(`usage: ${[name, ...expected].join(' ')}`);
  }
  if (values.hash && name !== 'add-app' && name !== 'rotate') {
    throw new UsageError('--hash applies only to add-app and rotate');
  }
  if (values.force && name !== 'revoke') throw new UsageError('--force applies only to revoke');

  const target = resolveTarget({ secretId: values['secret-id'], file: values.file }, env);
  const [first = '', second = ''] = operands;
  const command: Command =
    name === 'list'
      ? { name }
      : name === 'add-app' || name === 'rotate'
        ? { name, appId: checkedAppId(first), hash: values.hash }
        : name === 'revoke'
          ? { name, appId: checkedAppId(first), keyId: checkedKeyId(second), force: values.force }
          : { name, appId: checkedAppId(first) };
  return { kind: 'run', command, target, json: values.json };
}
