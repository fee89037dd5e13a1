import { appIdProblem } from '../../shared/keys/app-id';
import { INVALID_KEY_ID_MESSAGE, isKeyId } from '../../shared/keys/key-material';
import { nonEmpty, parseArgsQuietly } from '../common/args';
import { UsageError } from '../common/exit';
import type { Env } from '../common/tool-io';
import { KEY_STORE_ENV } from '../common/key-store-env';

export { UsageError };

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

export const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  list                              every App-id with its key ids (never a key)
  add-app <app-id>                  a new app with one fresh key
  rotate <app-id>                   add a fresh key; the existing keys stay valid
  revoke <app-id> <key-id>          remove one key (the app's last key only with --force)
  remove-app <app-id>               remove an app and all its keys

Where the keys are (exactly one; a flag wins over the environment):
  --secret-id <id>                  Secrets Manager secret name or ARN (env ${KEY_STORE_ENV.secretId}); region,
                                    credentials and AWS_ENDPOINT_URL come from the standard AWS environment
  --file <path>                     the local server's key file (env ${KEY_STORE_ENV.keysFile})

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

/** Secrets Manager's own limit on a SecretId (a name or an ARN): anything longer was pasted by mistake. */
export const MAX_SECRET_ID_LENGTH = 2048;

function secretTarget(secretId: string, source: string): Target {
  if (secretId.length > MAX_SECRET_ID_LENGTH) {
    // Never echoed: whatever was pasted there, it is no secret id.
    throw new UsageError(
      `${source} is ${secretId.length} characters long; a secret name or ARN has at most ${MAX_SECRET_ID_LENGTH}`,
    );
  }
  return { kind: 'secret', secretId };
}

function resolveTarget(
  flags: { readonly secretId: string | undefined; readonly file: string | undefined },
  env: Env,
): Target {
  const secretId = nonEmpty(flags.secretId);
  const file = nonEmpty(flags.file);
  if (secretId !== undefined && file !== undefined)
    throw new UsageError('give --secret-id or --file, not both');
  if (secretId !== undefined) return secretTarget(secretId, '--secret-id');
  if (file !== undefined) return { kind: 'file', path: file };

  const envSecretId = nonEmpty(env[KEY_STORE_ENV.secretId]);
  const envFile = nonEmpty(env[KEY_STORE_ENV.keysFile]);
  if (envSecretId !== undefined && envFile !== undefined) {
    throw new UsageError(
      `both ${KEY_STORE_ENV.secretId} and ${KEY_STORE_ENV.keysFile} are set; pick one with --secret-id or --file`,
    );
  }
  if (envSecretId !== undefined) return secretTarget(envSecretId, KEY_STORE_ENV.secretId);
  if (envFile !== undefined) return { kind: 'file', path: envFile };
  throw new UsageError(
    `no key store: give --secret-id <id> or --file <path> (or set ${KEY_STORE_ENV.secretId} or ${KEY_STORE_ENV.keysFile})`,
  );
}

function parseOptions(argv: readonly string[]) {
  return parseArgsQuietly(
    {
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
    },
    (message) => new UsageError(message),
  );
}

/** Turns argv (without node and the script) into a typed invocation, or throws UsageError. */
export function parseInvocation(argv: readonly string[], env: Env): Invocation {
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
