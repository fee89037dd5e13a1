import { appIdProblem } from '../../shared/keys/app-id';
import { INVALID_KEY_ID_MESSAGE, isKeyId } from '../../shared/keys/key-material';
import { parseCidr } from '../../shared/keys/network';
import type { DocumentRateLimit } from '../../shared/keys/key-document';
import {
  burstProblem,
  defaultBurst,
  perSecondProblem,
  RATE_LIMIT_LIMITS,
  type RateLimit,
} from '../../shared/keys/rate-limit';
import { parseTimestamp, TIMESTAMP_RULE } from '../../shared/keys/timestamp';
import { nonEmpty, parseArgsQuietly } from '../common/args';
import { UsageError } from '../common/exit';
import type { Env } from '../common/tool-io';
import { KEY_STORE_ENV } from '../common/key-store-env';
import { stackNameProblem } from '../common/stack-outputs';
import { shardCountProblem } from '../../shared/keys/registry';
import { DURATION_RULE, parseDuration } from './duration';

export { UsageError };

/** How `expire` changes a key's expiry: a span from now, an instant, or no expiry at all. */
export type ExpiryChange =
  | { readonly kind: 'in'; readonly ms: number }
  | { readonly kind: 'at'; readonly at: number }
  | { readonly kind: 'never' };

/** What `limit` gives an app: a limit of its own (a burst left out is not written), or the stack's default again. */
export type LimitChange = DocumentRateLimit | 'default';

export type Command =
  | {
      readonly name: 'list';
      /** The stack's appRateLimit (and appRateBurst) as the operator gives it; absent: not known here. */
      readonly defaultLimit?: RateLimit;
    }
  | {
      readonly name: 'add-app';
      readonly appId: string;
      readonly hash: boolean;
      /** The new key's own lifetime; absent: it does not expire. */
      readonly expiresInMs?: number;
    }
  | {
      readonly name: 'rotate';
      readonly appId: string;
      readonly hash: boolean;
      readonly expiresInMs?: number;
      /** Every other key of the app then expires by now + this. */
      readonly graceMs?: number;
    }
  | { readonly name: 'revoke'; readonly appId: string; readonly keyId: string; readonly force: boolean }
  | { readonly name: 'remove-app'; readonly appId: string }
  | { readonly name: 'expire'; readonly appId: string; readonly keyId: string; readonly expiry: ExpiryChange }
  /** `appId` absent: every app. */
  | { readonly name: 'prune'; readonly appId?: string }
  /** `cidrs` 'any': remove the allowlist. */
  | { readonly name: 'allow'; readonly appId: string; readonly cidrs: readonly string[] | 'any' }
  | { readonly name: 'disallow'; readonly appId: string; readonly cidrs: readonly string[] }
  | { readonly name: 'limit'; readonly appId: string; readonly limit: LimitChange }
  /** Which shard holds the app, and which secret or file that is. */
  | { readonly name: 'where'; readonly appId: string }
  /** Many changes from a file, one write per shard touched. */
  | {
      readonly name: 'apply';
      readonly file: string;
      /** Where new keys go: a file created 0600, or standard output ('-'); absent: the file creates none. */
      readonly keysOut?: string;
      readonly dryRun: boolean;
    }
  /** Moves the apps not in their home shard; `shards` (a local registry only) changes the count first. */
  | {
      readonly name: 'reshard';
      readonly shards?: number;
      /** How long to wait between copying and removing the old copies; absent: the key cache TTL + a margin. */
      readonly settleMs?: number;
      readonly dryRun: boolean;
    }
  /** Creates a local registry of `shards` empty key files. */
  | { readonly name: 'init'; readonly shards: number };

export type CommandName = Command['name'];

/**
 * Where the keys live: a registry of shards, named by the stack that made it, by its manifest secret or by a
 * local registry.json; or a single Secrets Manager secret (name or ARN) or key file, a registry of one shard.
 */
export type Target =
  | { readonly kind: 'secret'; readonly secretId: string }
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'stack'; readonly stackName: string }
  | { readonly kind: 'registry'; readonly manifestId: string }
  | { readonly kind: 'registry-file'; readonly path: string };

export type Invocation =
  | { readonly kind: 'help' }
  | { readonly kind: 'run'; readonly command: Command; readonly target: Target; readonly json: boolean };

export const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  list                              every App-id: its networks, rate limit, key ids and expiries (never a key)
  add-app <app-id>                  a new app with one fresh key
  rotate <app-id>                   add a fresh key; the existing keys stay valid (until --grace ends)
  revoke <app-id> <key-id>          remove one key (the app's last key only with --force)
  remove-app <app-id>               remove an app and all its keys
  expire <app-id> <key-id> (--in <duration> | --at <date-time> | --never)
                                    set or clear one key's expiry
  prune [<app-id>]                  remove the keys whose expiry has passed (of one app, or of all)
  allow <app-id> <cidr>...          let the app call only from these networks (added to its allowlist)
  allow <app-id> --any              remove the app's allowlist: any network again
  disallow <app-id> <cidr>...       remove networks from the app's allowlist (none left: no network at all)
  limit <app-id> --per-second <n> [--burst <m>]
                                    give the app a rate limit of its own
  limit <app-id> --default          remove the app's own rate limit: the default limit applies again
  where <app-id>                    the shard that holds the app (or would), and its secret or file
  apply <file> [--keys-out <path>|-] [--dry-run]
                                    many changes at once (docs/keys.md: the apply file), one write per shard
  reshard [--settle <duration>] [--dry-run]
                                    move the apps not in their home shard (after a deploy that changed keyShards)
  reshard --shards <n>              a local registry: change its shard count, then move the apps
  init --shards <n>                 create a local registry of n empty shards (with --registry-file)

Where the keys are (exactly one; a flag wins over the environment). Region, credentials and AWS_ENDPOINT_URL
come from the standard AWS environment:
  --stack <name>                    a deployed payment-api stack: its key registry, from its outputs
                                    (env ${KEY_STORE_ENV.stack})
  --registry <id>                   the key registry's manifest secret, name or ARN (the stack's KeyRegistry
                                    output; env ${KEY_STORE_ENV.registry})
  --registry-file <path>            a local registry: its registry.json (env ${KEY_STORE_ENV.registryFile})
  --secret-id <id>                  one Secrets Manager secret, name or ARN (env ${KEY_STORE_ENV.secretId})
  --file <path>                     the local server's key file (env ${KEY_STORE_ENV.keysFile})

Options:
  --hash                            add-app, rotate: store only sha256:<hex> of the new key
  --expires-in <duration>           add-app, rotate: the new key expires after this long
  --grace <duration>                rotate: every other key of the app expires after this long at the latest
                                    (0s: at once; they stay listed until prune)
  --in <duration>, --at <date-time>, --never
                                    expire: the key expires after this long, at this instant, or never
  --any                             allow: any network (removes the allowlist)
  --force                           revoke: allow removing the app's last key (the app goes with it)
  --per-second <n>                  limit: requests per second, on average (0.5: one every 2s)
  --burst <m>                       limit: requests accepted at once (default: the rate rounded up, at least 1)
  --default                         limit: remove the app's own rate limit
  --default-limit <n>, --default-burst <m>
                                    list: the stack's appRateLimit (and appRateBurst), to show them for the apps
                                    without a limit of their own (the CLI cannot read a stack's settings)
  --keys-out <path>                 apply: write the new keys to this file, created with mode 0600 (never
                                    overwritten); - for standard output
  --dry-run                         apply, reshard: check and say what would change, write nothing
  --settle <duration>               reshard: wait this long between copying and removing the old copies
                                    (default: the key cache TTL the registry names, plus 30s)
  --shards <n>                      init, reshard: the shard count of a local registry (1 to 256)
  --json                            machine-readable output
  -h, --help                        this text

A duration is ${DURATION_RULE}.
A date-time is ${TIMESTAMP_RULE}.
A CIDR block is an IPv4 or IPv6 network (203.0.113.0/24, 2001:db8::/32) or a single address.
A rate is ${RATE_LIMIT_LIMITS.perSecond.min} to ${RATE_LIMIT_LIMITS.perSecond.max} requests per second; a burst is a whole number from ${RATE_LIMIT_LIMITS.burst.min} to ${RATE_LIMIT_LIMITS.burst.max}.
An app's own rate limit takes effect within the key cache's TTL, and only where the stack is deployed with
appRateLimit.

A new key is printed once, on standard output, and nowhere else. For --json, run npm with -s
(npm run -s keys -- ...) or call npx tsx bin/keys.ts, so npm's banner stays off standard output.
`;

/** How many operands each command takes after its name, and how its usage reads when they are wrong. */
const COMMAND_OPERANDS: Readonly<
  Record<CommandName, { readonly min: number; readonly max: number; readonly usage: string }>
> = {
  list: { min: 0, max: 0, usage: 'list' },
  'add-app': { min: 1, max: 1, usage: 'add-app <app-id>' },
  rotate: { min: 1, max: 1, usage: 'rotate <app-id>' },
  revoke: { min: 2, max: 2, usage: 'revoke <app-id> <key-id>' },
  'remove-app': { min: 1, max: 1, usage: 'remove-app <app-id>' },
  expire: {
    min: 2,
    max: 2,
    usage: 'expire <app-id> <key-id> (--in <duration> | --at <date-time> | --never)',
  },
  prune: { min: 0, max: 1, usage: 'prune [<app-id>]' },
  allow: { min: 1, max: Infinity, usage: 'allow <app-id> (<cidr>... | --any)' },
  disallow: { min: 2, max: Infinity, usage: 'disallow <app-id> <cidr>...' },
  limit: { min: 1, max: 1, usage: 'limit <app-id> (--per-second <n> [--burst <m>] | --default)' },
  where: { min: 1, max: 1, usage: 'where <app-id>' },
  apply: { min: 1, max: 1, usage: 'apply <file> [--keys-out <path>|-] [--dry-run]' },
  reshard: { min: 0, max: 0, usage: 'reshard [--settle <duration>] [--shards <n>] [--dry-run]' },
  init: { min: 0, max: 0, usage: 'init --shards <n> --registry-file <path>' },
};

const COMMAND_NAMES = Object.keys(COMMAND_OPERANDS) as CommandName[];

/** Each command-specific option, and the commands it applies to. */
const OPTION_COMMANDS = {
  hash: ['add-app', 'rotate'],
  'expires-in': ['add-app', 'rotate'],
  grace: ['rotate'],
  in: ['expire'],
  at: ['expire'],
  never: ['expire'],
  any: ['allow'],
  force: ['revoke'],
  'per-second': ['limit'],
  burst: ['limit'],
  default: ['limit'],
  'default-limit': ['list'],
  'default-burst': ['list'],
  'keys-out': ['apply'],
  'dry-run': ['apply', 'reshard'],
  settle: ['reshard'],
  shards: ['init', 'reshard'],
} as const satisfies Readonly<Record<string, readonly CommandName[]>>;

type CommandOption = keyof typeof OPTION_COMMANDS;

function isCommandName(value: string): value is CommandName {
  return Object.hasOwn(COMMAND_OPERANDS, value);
}

/** `a`, `a and b`, `a, b or c`. */
function listed(words: readonly string[], conjunction: 'and' | 'or'): string {
  const last = words[words.length - 1] ?? '';
  return words.length <= 1 ? last : `${words.slice(0, -1).join(', ')} ${conjunction} ${last}`;
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

function checkedSecretId(secretId: string, source: string): string {
  if (secretId.length > MAX_SECRET_ID_LENGTH) {
    // Never echoed: whatever was pasted there, it is no secret id.
    throw new UsageError(
      `${source} is ${secretId.length} characters long; a secret name or ARN has at most ${MAX_SECRET_ID_LENGTH}`,
    );
  }
  return secretId;
}

/** The flags that name a target, each with its variable, in the order usage lists them. */
const TARGET_SOURCES = [
  { flag: 'stack', variable: KEY_STORE_ENV.stack },
  { flag: 'registry', variable: KEY_STORE_ENV.registry },
  { flag: 'registry-file', variable: KEY_STORE_ENV.registryFile },
  { flag: 'secret-id', variable: KEY_STORE_ENV.secretId },
  { flag: 'file', variable: KEY_STORE_ENV.keysFile },
] as const;

type TargetFlag = (typeof TARGET_SOURCES)[number]['flag'];

function targetOf(flag: TargetFlag, value: string, source: string): Target {
  switch (flag) {
    case 'stack': {
      const problem = stackNameProblem(value);
      if (problem !== undefined) throw new UsageError(`invalid ${source}: ${problem}`);
      return { kind: 'stack', stackName: value };
    }
    case 'registry':
      return { kind: 'registry', manifestId: checkedSecretId(value, source) };
    case 'registry-file':
      return { kind: 'registry-file', path: value };
    case 'secret-id':
      return { kind: 'secret', secretId: checkedSecretId(value, source) };
    case 'file':
      return { kind: 'file', path: value };
  }
}

function resolveTarget(flags: Readonly<Record<TargetFlag, string | undefined>>, env: Env): Target {
  const fromFlags = TARGET_SOURCES.filter(({ flag }) => nonEmpty(flags[flag]) !== undefined);
  const allFlags = listed(
    TARGET_SOURCES.map(({ flag }) => `--${flag}`),
    'or',
  );
  if (fromFlags.length > 1) {
    throw new UsageError(
      `give one of ${allFlags}, not ${listed(
        fromFlags.map(({ flag }) => `--${flag}`),
        'and',
      )}`,
    );
  }
  const [flagged] = fromFlags;
  if (flagged !== undefined) return targetOf(flagged.flag, flags[flagged.flag] ?? '', `--${flagged.flag}`);

  const fromEnv = TARGET_SOURCES.filter(({ variable }) => nonEmpty(env[variable]) !== undefined);
  if (fromEnv.length > 1) {
    const names = listed(
      fromEnv.map(({ variable }) => variable),
      'and',
    );
    throw new UsageError(`${fromEnv.length === 2 ? 'both ' : ''}${names} are set; pick one with ${allFlags}`);
  }
  const [set] = fromEnv;
  if (set !== undefined) return targetOf(set.flag, env[set.variable] ?? '', set.variable);
  throw new UsageError(
    `no key store: give ${listed(
      ['--stack <name>', '--registry <id>', '--registry-file <path>', '--secret-id <id>', '--file <path>'],
      'or',
    )} (or set ${listed(
      TARGET_SOURCES.map(({ variable }) => variable),
      'or',
    )})`,
  );
}

function parseOptions(argv: readonly string[]) {
  return parseArgsQuietly(
    {
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        stack: { type: 'string' },
        registry: { type: 'string' },
        'registry-file': { type: 'string' },
        'secret-id': { type: 'string' },
        file: { type: 'string' },
        'keys-out': { type: 'string' },
        'dry-run': { type: 'boolean', default: false },
        settle: { type: 'string' },
        shards: { type: 'string' },
        hash: { type: 'boolean', default: false },
        'expires-in': { type: 'string' },
        grace: { type: 'string' },
        in: { type: 'string' },
        at: { type: 'string' },
        never: { type: 'boolean', default: false },
        any: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        'per-second': { type: 'string' },
        burst: { type: 'string' },
        default: { type: 'boolean', default: false },
        'default-limit': { type: 'string' },
        'default-burst': { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    },
    (message) => new UsageError(message),
  );
}

type OptionValues = ReturnType<typeof parseOptions>['values'];

function given(values: OptionValues, option: CommandOption): boolean {
  const value = values[option];
  return value !== undefined && value !== false;
}

function checkOptionsApply(values: OptionValues, name: CommandName): void {
  for (const [option, commands] of Object.entries(OPTION_COMMANDS) as [
    CommandOption,
    readonly CommandName[],
  ][]) {
    if (given(values, option) && !commands.includes(name)) {
      throw new UsageError(`--${option} applies only to ${listed(commands, 'and')}`);
    }
  }
}

/**
 * A duration option's value in milliseconds. Never echoed: it is no duration, and may be anything. A zero span
 * makes sense for a grace or an expiry set from now, not for the lifetime of a key being made.
 */
function checkedDuration(option: 'expires-in' | 'grace' | 'in' | 'settle', text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`invalid --${option}: expected ${DURATION_RULE}`);
  if (ms === 0 && option === 'expires-in') {
    throw new UsageError(
      '--expires-in must be longer than 0s: a new key that has already expired is of no use',
    );
  }
  return ms;
}

function optionalDuration(
  option: 'expires-in' | 'grace',
  text: string | undefined,
): { readonly ms?: number } {
  return text === undefined ? {} : { ms: checkedDuration(option, text) };
}

function checkedExpiry(values: OptionValues): ExpiryChange {
  const chosen = (['in', 'at', 'never'] as const).filter((option) => given(values, option));
  if (chosen.length !== 1) {
    throw new UsageError('expire needs exactly one of --in <duration>, --at <date-time> or --never');
  }
  if (values.in !== undefined) return { kind: 'in', ms: checkedDuration('in', values.in) };
  if (values.at !== undefined) {
    const at = parseTimestamp(values.at);
    if (at === undefined) throw new UsageError(`invalid --at: expected ${TIMESTAMP_RULE}`);
    return { kind: 'at', at };
  }
  return { kind: 'never' };
}

/** Every block checked before anything is read; a bad one is named by position (it may be anything). */
function checkedCidrs(values: readonly string[]): string[] {
  return values.map((value, index) => {
    const reading = parseCidr(value);
    if (!reading.ok) throw new UsageError(`CIDR block #${index + 1} is not valid: ${reading.reason}`);
    return value;
  });
}

/**
 * A number as an operator types it: digits, optionally a fraction (`20`, `0.5`); NaN for anything else, so that
 * `1e3`, `0x10`, ` 20` or `Infinity` get the rule rather than a reading nobody meant.
 */
function decimalOf(text: string): number {
  return /^\d{1,9}(\.\d{1,9})?$/.test(text) ? Number(text) : NaN;
}

/** A rate option's value. Never echoed: it is no rate, and may be anything. */
function checkedPerSecond(option: 'per-second' | 'default-limit', text: string): number {
  const perSecond = decimalOf(text);
  const problem = perSecondProblem(perSecond);
  if (problem !== undefined) throw new UsageError(`--${option} ${problem}`);
  return perSecond;
}

/** A burst option's value. Never echoed. */
function checkedBurst(option: 'burst' | 'default-burst', text: string): number {
  const burst = decimalOf(text);
  const problem = burstProblem(burst);
  if (problem !== undefined) throw new UsageError(`--${option} ${problem}`);
  return burst;
}

function checkedLimitChange(values: OptionValues): LimitChange {
  const perSecondText = values['per-second'];
  const chosen = [perSecondText !== undefined, values.default].filter(Boolean).length;
  if (chosen !== 1) throw new UsageError('limit needs exactly one of --per-second <n> or --default');
  if (perSecondText === undefined) {
    if (values.burst !== undefined)
      throw new UsageError('--burst goes with --per-second, not with --default');
    return 'default';
  }
  const perSecond = checkedPerSecond('per-second', perSecondText);
  return values.burst === undefined
    ? { perSecond }
    : { perSecond, burst: checkedBurst('burst', values.burst) };
}

/** list's view of the stack's default limit; absent unless the operator names it. */
function checkedDefaultLimit(values: OptionValues): { readonly defaultLimit?: RateLimit } {
  const perSecondText = values['default-limit'];
  const burstText = values['default-burst'];
  if (perSecondText === undefined) {
    if (burstText !== undefined) throw new UsageError('--default-burst needs --default-limit');
    return {};
  }
  const perSecond = checkedPerSecond('default-limit', perSecondText);
  const burst = burstText === undefined ? defaultBurst(perSecond) : checkedBurst('default-burst', burstText);
  return { defaultLimit: { perSecond, burst } };
}

function commandOf(name: CommandName, operands: readonly string[], values: OptionValues): Command {
  const [first = '', second = '', ...rest] = operands;
  switch (name) {
    case 'list':
      return { name, ...checkedDefaultLimit(values) };
    case 'add-app': {
      const { ms: expiresInMs } = optionalDuration('expires-in', values['expires-in']);
      return {
        name,
        appId: checkedAppId(first),
        hash: values.hash,
        ...(expiresInMs === undefined ? {} : { expiresInMs }),
      };
    }
    case 'rotate': {
      const { ms: expiresInMs } = optionalDuration('expires-in', values['expires-in']);
      const { ms: graceMs } = optionalDuration('grace', values.grace);
      return {
        name,
        appId: checkedAppId(first),
        hash: values.hash,
        ...(expiresInMs === undefined ? {} : { expiresInMs }),
        ...(graceMs === undefined ? {} : { graceMs }),
      };
    }
    case 'revoke':
      return { name, appId: checkedAppId(first), keyId: checkedKeyId(second), force: values.force };
    case 'remove-app':
      return { name, appId: checkedAppId(first) };
    case 'expire':
      return { name, appId: checkedAppId(first), keyId: checkedKeyId(second), expiry: checkedExpiry(values) };
    case 'prune':
      return operands.length === 0 ? { name } : { name, appId: checkedAppId(first) };
    case 'allow': {
      const cidrs = operands.slice(1);
      if (values.any && cidrs.length > 0) throw new UsageError('give CIDR blocks or --any, not both');
      if (!values.any && cidrs.length === 0) throw new UsageError(`usage: ${COMMAND_OPERANDS.allow.usage}`);
      return { name, appId: checkedAppId(first), cidrs: values.any ? 'any' : checkedCidrs(cidrs) };
    }
    case 'disallow':
      return { name, appId: checkedAppId(first), cidrs: checkedCidrs([second, ...rest]) };
    case 'limit':
      return { name, appId: checkedAppId(first), limit: checkedLimitChange(values) };
    case 'where':
      return { name, appId: checkedAppId(first) };
    case 'apply': {
      const keysOut = nonEmpty(values['keys-out']);
      return { name, file: first, ...(keysOut === undefined ? {} : { keysOut }), dryRun: values['dry-run'] };
    }
    case 'reshard': {
      const shards = values.shards === undefined ? undefined : checkedShards(values.shards);
      const settleMs = values.settle === undefined ? undefined : checkedDuration('settle', values.settle);
      return {
        name,
        ...(shards === undefined ? {} : { shards }),
        ...(settleMs === undefined ? {} : { settleMs }),
        dryRun: values['dry-run'],
      };
    }
    case 'init':
      if (values.shards === undefined) throw new UsageError(`usage: ${COMMAND_OPERANDS.init.usage}`);
      return { name, shards: checkedShards(values.shards) };
  }
}

/** A shard count as typed; never echoed. */
function checkedShards(text: string): number {
  const shards = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
  const problem = shardCountProblem(shards);
  if (problem !== undefined) throw new UsageError(`--shards ${problem}`);
  return shards;
}

/** What a command needs of its target beyond naming one. */
function checkTargetFits(command: Command, target: Target): void {
  const local = target.kind === 'registry-file';
  if (command.name === 'init' && !local) {
    throw new UsageError(
      'init creates a local registry: give --registry-file <path>; a stack creates its own (cdk deploy -c keyShards=<n>)',
    );
  }
  if (command.name === 'reshard' && command.shards !== undefined && !local) {
    throw new UsageError(
      'the stack owns its shard count: deploy with -c keyShards=<n> -c keyShardsPrevious=<current>, then run ' +
        'reshard without --shards (--shards is for a local registry)',
    );
  }
}

/** Turns argv (without node and the script) into a typed invocation, or throws UsageError. */
export function parseInvocation(argv: readonly string[], env: Env): Invocation {
  const { values, positionals } = parseOptions(argv);
  if (values.help) return { kind: 'help' };

  const [name, ...operands] = positionals;
  if (name === undefined) throw new UsageError('no command given; run with --help for usage');
  if (!isCommandName(name)) {
    throw new UsageError(`unknown command; expected ${listed(COMMAND_NAMES, 'or')}`);
  }

  const { min, max, usage } = COMMAND_OPERANDS[name];
  if (operands.length < min || operands.length > max) throw new UsageError(`usage: ${usage}`);
  checkOptionsApply(values, name);

  const target = resolveTarget(
    {
      stack: values.stack,
      registry: values.registry,
      'registry-file': values['registry-file'],
      'secret-id': values['secret-id'],
      file: values.file,
    },
    env,
  );
  const command = commandOf(name, operands, values);
  checkTargetFits(command, target);
  return { kind: 'run', command, target, json: values.json };
}
