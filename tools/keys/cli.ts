import { Command as Program, CommanderError } from 'commander';
import { appIdProblem } from '../../shared/keys/app-id';
import { DEFAULT_KEY_PREFIX, isKeyPrefix, KEY_PREFIX_RULE } from '../../shared/keys/key-format';
import { INVALID_KEY_ID_MESSAGE, isKeyId } from '../../shared/keys/key-material';
import { parseCidr } from '../../shared/keys/network';
import {
  burstProblem,
  defaultBurst,
  perSecondProblem,
  RATE_LIMIT_LIMITS,
  type RateLimit,
} from '../../shared/keys/rate-limit';
import { shardCountProblem } from '../../shared/keys/registry';
import { parseTimestamp, TIMESTAMP_RULE } from '../../shared/keys/timestamp';
import { nonEmpty } from '../common/args';
import { UsageError } from '../common/exit';
import { KEY_STORE_ENV } from '../common/key-store-env';
import { stackNameProblem } from '../common/stack-name';
import type { Env } from '../common/tool-io';
import type { EditRequest, ExpiryChange, KeyStorage, LimitChange } from './changes';
import { DURATION_RULE, parseDuration } from './duration';
import type { LeakedAction } from './leaked';

/**
 * The key CLI's commands, declared with commander: each its arguments, options, help (`keys <command> --help`,
 * `keys help <command>`) with an example and the environment's equivalents, and a "did you mean" for a misspelt
 * command or option. Commander parses; what a value means is checked here, and no value is ever echoed (a key
 * pasted in the wrong place must not reach a terminal's scrollback twice).
 */

export type Command =
  /** `defaultLimit`: the stack's appRateLimit (and appRateBurst) as the operator gives it. */
  | { readonly name: 'list'; readonly defaultLimit?: RateLimit }
  /** One app's edit: add-app, rotate, revoke, remove-app, expire, prune <app>, allow, disallow, limit. */
  | { readonly name: 'edit'; readonly edit: EditRequest }
  | { readonly name: 'prune-all' }
  | { readonly name: 'where'; readonly appId: string }
  /** `keysOut`: a file created 0600, or standard output ('-'); absent: the file creates no key. */
  | { readonly name: 'apply'; readonly file: string; readonly keysOut?: string; readonly dryRun: boolean }
  /** `shards`: a local registry's new count; `settleMs` absent: the key cache TTL plus a margin. */
  | {
      readonly name: 'reshard';
      readonly shards?: number;
      readonly settleMs?: number;
      readonly dryRun: boolean;
    }
  | { readonly name: 'init'; readonly shards: number; readonly path: string }
  /**
   * Keys read from standard input, each ended: revoked (expired now) or, with `rotate`, replaced by a new key while
   * the leaked one stays valid for `graceMs`. `keysOut` as apply's (rotate only); absent: standard output.
   */
  | {
      readonly name: 'leaked';
      readonly action: LeakedAction;
      readonly keysOut?: string;
      readonly dryRun: boolean;
    };

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

export interface Invocation {
  readonly command: Command;
  readonly target: Target;
  readonly json: boolean;
  /** The prefix of new keys as given (--key-prefix, or KEYS_KEY_PREFIX), for the commands that make keys. */
  readonly keyPrefix?: string;
}

/** The variable --key-prefix may be given by. */
export const KEY_PREFIX_ENV = 'KEYS_KEY_PREFIX';

/** The flags that name a target, each with its variable, in the order help lists them. */
const TARGETS = [
  { flag: 'stack', value: '<name>', variable: KEY_STORE_ENV.stack, what: 'a deployed payment-api stack' },
  {
    flag: 'registry',
    value: '<id>',
    variable: KEY_STORE_ENV.registry,
    what: "the registry's manifest secret",
  },
  {
    flag: 'registry-file',
    value: '<path>',
    variable: KEY_STORE_ENV.registryFile,
    what: 'a local registry.json',
  },
  { flag: 'secret-id', value: '<id>', variable: KEY_STORE_ENV.secretId, what: 'one Secrets Manager secret' },
  { flag: 'file', value: '<path>', variable: KEY_STORE_ENV.keysFile, what: "the local server's key file" },
] as const;

type TargetFlag = (typeof TARGETS)[number]['flag'];

/** `a`, `a and b`, `a, b or c`. */
function listed(words: readonly string[], conjunction: 'and' | 'or'): string {
  const last = words[words.length - 1] ?? '';
  return words.length <= 1 ? last : `${words.slice(0, -1).join(', ')} ${conjunction} ${last}`;
}

function checkedAppId(value: string): string {
  const problem = appIdProblem(value);
  if (problem !== undefined) throw new UsageError(`invalid app id: ${problem}`);
  return value;
}

function checkedKeyId(value: string): string {
  if (!isKeyId(value)) throw new UsageError(INVALID_KEY_ID_MESSAGE);
  return value;
}

/** Secrets Manager's own limit on a SecretId (a name or an ARN): anything longer was pasted by mistake. */
export const MAX_SECRET_ID_LENGTH = 2048;

function checkedSecretId(secretId: string, source: string): string {
  if (secretId.length > MAX_SECRET_ID_LENGTH) {
    throw new UsageError(
      `${source} is ${secretId.length} characters long; a secret name or ARN has at most ${MAX_SECRET_ID_LENGTH}`,
    );
  }
  return secretId;
}

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

type Options = Readonly<Record<string, string | boolean | undefined>>;

const text = (options: Options, name: string): string | undefined => {
  const value = options[camel(name)];
  return typeof value === 'string' ? value : undefined;
};
const flag = (options: Options, name: string): boolean => options[camel(name)] === true;

function camel(option: string): string {
  return option.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

const ALL_TARGET_FLAGS = listed(
  TARGETS.map(({ flag }) => `--${flag}`),
  'or',
);

/** Exactly one target: a flag wins over the environment. */
function resolveTarget(options: Options, env: Env): Target {
  const value = (flag: TargetFlag) => nonEmpty(text(options, flag));
  const flagged = TARGETS.filter(({ flag }) => value(flag) !== undefined);
  if (flagged.length > 1) {
    const given = listed(
      flagged.map(({ flag }) => `--${flag}`),
      'and',
    );
    throw new UsageError(`give one of ${ALL_TARGET_FLAGS}, not ${given}`);
  }
  const [first] = flagged;
  if (first !== undefined) return targetOf(first.flag, value(first.flag) ?? '', `--${first.flag}`);
  const fromEnv = TARGETS.filter(({ variable }) => nonEmpty(env[variable]) !== undefined);
  if (fromEnv.length > 1) {
    const names = listed(
      fromEnv.map(({ variable }) => variable),
      'and',
    );
    throw new UsageError(
      `${fromEnv.length === 2 ? 'both ' : ''}${names} are set; pick one with ${ALL_TARGET_FLAGS}`,
    );
  }
  const [set] = fromEnv;
  if (set !== undefined) return targetOf(set.flag, env[set.variable] ?? '', set.variable);
  throw new UsageError(
    `no key store: give ${listed(
      TARGETS.map(({ flag, value: shape }) => `--${flag} ${shape}`),
      'or',
    )} (or set ${listed(
      TARGETS.map(({ variable }) => variable),
      'or',
    )})`,
  );
}

/** A duration in ms; never echoed. A new key's lifetime of 0s is of no use; a grace or an expiry of 0s is. */
function checkedDuration(option: string, text: string): number {
  const ms = parseDuration(text);
  if (ms === undefined) throw new UsageError(`invalid --${option}: expected ${DURATION_RULE}`);
  if (ms === 0 && option === 'expires-in') {
    throw new UsageError(
      '--expires-in must be longer than 0s: a new key that has already expired is of no use',
    );
  }
  return ms;
}

/** A decimal as an operator types it: digits, optionally a fraction (`20`, `0.5`). */
const DECIMAL = /^\d{1,9}(\.\d{1,9})?$/;

/**
 * A number typed in the `shape` given (a shard count: up to 4 digits); never echoed. Anything else is NaN to
 * `problemOf`, so that `1e3`, `0x10`, ` 20` or `Infinity` get the rule rather than a reading nobody meant.
 */
function checkedNumber(
  option: string,
  text: string,
  problemOf: (value: number) => string | undefined,
  shape = DECIMAL,
): number {
  const value = shape.test(text) ? Number(text) : NaN;
  const problem = problemOf(value);
  if (problem !== undefined) throw new UsageError(`--${option} ${problem}`);
  return value;
}

const checkedShards = (text: string): number => checkedNumber('shards', text, shardCountProblem, /^\d{1,4}$/);

/** Every block checked before anything is read; a bad one is named by position (it may be anything). */
function checkedCidrs(values: readonly string[]): string[] {
  return values.map((value, index) => {
    const reading = parseCidr(value);
    if (!reading.ok) throw new UsageError(`CIDR block #${index + 1} is not valid: ${reading.reason}`);
    return value;
  });
}

function optionalDuration(options: Options, name: string): number | undefined {
  const value = text(options, name);
  return value === undefined ? undefined : checkedDuration(name, value);
}

/** --plain stores the key itself; --hash (which once chose sha256:) is the default now, kept for scripts. */
function storageOf(options: Options): KeyStorage {
  if (flag(options, 'plain') && flag(options, 'hash'))
    throw new UsageError('give --plain or --hash, not both');
  return flag(options, 'plain') ? 'plain' : 'digest';
}

/** add-app and rotate: the app, how its new key is stored, and the key's own expiry when given. */
function newKeyRequest<Op extends 'add' | 'rotate'>(op: Op, appId: string, options: Options) {
  const checked = { op, appId: checkedAppId(appId), storage: storageOf(options) };
  const ms = optionalDuration(options, 'expires-in');
  return ms === undefined ? checked : { ...checked, expiry: { kind: 'in' as const, ms } };
}

/** The prefix of new keys as given by --key-prefix or KEYS_KEY_PREFIX (a flag wins); never echoed. */
function keyPrefixOf(options: Options, env: Env): string | undefined {
  const given = nonEmpty(text(options, 'key-prefix'));
  const source = given === undefined ? KEY_PREFIX_ENV : '--key-prefix';
  const prefix = given ?? nonEmpty(env[KEY_PREFIX_ENV]);
  if (prefix !== undefined && !isKeyPrefix(prefix)) {
    throw new UsageError(`invalid ${source}: a key prefix is ${KEY_PREFIX_RULE}`);
  }
  return prefix;
}

function leakedCommand(options: Options): Command {
  const graceMs = optionalDuration(options, 'grace');
  const rotate = flag(options, 'rotate');
  if (rotate && graceMs === undefined) {
    throw new UsageError(
      '--rotate needs --grace <duration>: how long the leaked key stays valid (0s: not at all)',
    );
  }
  if (!rotate && graceMs !== undefined) throw new UsageError('--grace goes with --rotate');
  const keysOut = nonEmpty(text(options, 'keys-out'));
  if (!rotate && keysOut !== undefined)
    throw new UsageError('--keys-out goes with --rotate: only it makes keys');
  return {
    name: 'leaked',
    action: graceMs === undefined ? { kind: 'revoke' } : { kind: 'rotate', graceMs },
    ...(keysOut === undefined ? {} : { keysOut }),
    dryRun: flag(options, 'dry-run'),
  };
}

function checkedExpiry(options: Options): ExpiryChange {
  const chosen = ['in', 'at', 'never'].filter(
    (name) => options[name] !== undefined && options[name] !== false,
  );
  if (chosen.length !== 1)
    throw new UsageError('expire needs exactly one of --in <duration>, --at <date-time> or --never');
  const inText = text(options, 'in');
  if (inText !== undefined) return { kind: 'in', ms: checkedDuration('in', inText) };
  const atText = text(options, 'at');
  if (atText === undefined) return { kind: 'never' };
  const at = parseTimestamp(atText);
  if (at === undefined) throw new UsageError(`invalid --at: expected ${TIMESTAMP_RULE}`);
  return { kind: 'at', at };
}

function checkedLimit(options: Options): LimitChange {
  const perSecondText = text(options, 'per-second');
  const burstText = text(options, 'burst');
  if ((perSecondText !== undefined) === flag(options, 'default')) {
    throw new UsageError('limit needs exactly one of --per-second <n> or --default');
  }
  if (perSecondText === undefined) {
    if (burstText !== undefined) throw new UsageError('--burst goes with --per-second, not with --default');
    return 'default';
  }
  const perSecond = checkedNumber('per-second', perSecondText, perSecondProblem);
  return burstText === undefined
    ? { perSecond }
    : { perSecond, burst: checkedNumber('burst', burstText, burstProblem) };
}

function checkedDefaultLimit(options: Options): { readonly defaultLimit?: RateLimit } {
  const perSecondText = text(options, 'default-limit');
  const burstText = text(options, 'default-burst');
  if (perSecondText === undefined) {
    if (burstText !== undefined) throw new UsageError('--default-burst needs --default-limit');
    return {};
  }
  const perSecond = checkedNumber('default-limit', perSecondText, perSecondProblem);
  const burst =
    burstText === undefined
      ? defaultBurst(perSecond)
      : checkedNumber('default-burst', burstText, burstProblem);
  return { defaultLimit: { perSecond, burst } };
}

function allowRequest(appId: string, cidrs: readonly string[], options: Options): EditRequest {
  const any = flag(options, 'any');
  if (any && cidrs.length > 0) throw new UsageError('give CIDR blocks or --any, not both');
  if (!any && cidrs.length === 0) throw new UsageError('usage: allow <app-id> (<cidr>... | --any)');
  const network = any
    ? { kind: 'allow-any' as const }
    : { kind: 'allow' as const, cidrs: checkedCidrs(cidrs) };
  return { op: 'network', appId, network };
}

/** One command: how it is typed, what it does, its options, an example, and what it asks for once checked. */
interface CommandSpec {
  readonly name: string;
  readonly operands: string;
  /** How many operands, for the one-line usage error commander's own messages are replaced by; default name and operands. */
  readonly usage?: string;
  readonly summary: string;
  readonly options: readonly string[];
  readonly example: string;
  /** What its values may be, when the options' own lines cannot say it all. */
  readonly notes?: string;
  readonly build: (operands: readonly string[], options: Options, target: Target) => Command;
}

const CIDR_RULE =
  'A CIDR block is an IPv4 or IPv6 network (203.0.113.0/24, 2001:db8::/32) or a single address.';

const edit = (request: EditRequest): Command => ({ name: 'edit', edit: request });

/** Each command-specific option: its flags and what it does. */
const OPTIONS: Readonly<Record<string, { readonly flags: string; readonly help: string }>> = {
  plain: {
    flags: '--plain',
    help:
      'store the new key itself, not its digest: only on purpose, for a reader that needs the key back (a test ' +
      'stack, a tool that sends it); anyone who may read the secret can then act as the app',
  },
  hash: { flags: '--hash', help: 'store only the digest of the new key (the default; kept for scripts)' },
  'key-prefix': {
    flags: '--key-prefix <prefix>',
    help: `the prefix of new keys, ${KEY_PREFIX_RULE} (env ${KEY_PREFIX_ENV}; with --stack, its KeyPrefix output; default ${DEFAULT_KEY_PREFIX})`,
  },
  rotate: { flags: '--rotate', help: 'give each app a new key instead, the leaked one valid for --grace' },
  'leaked-grace': {
    flags: '--grace <duration>',
    help: 'with --rotate: how long the leaked key stays valid (0s: it ends at once)',
  },
  'expires-in': { flags: '--expires-in <duration>', help: 'the new key expires after this long' },
  grace: {
    flags: '--grace <duration>',
    help: 'every other key of the app expires after this long at the latest (0s: at once; they stay listed until prune)',
  },
  in: { flags: '--in <duration>', help: 'the key expires after this long' },
  at: { flags: '--at <date-time>', help: `the key expires at this instant (${TIMESTAMP_RULE})` },
  never: { flags: '--never', help: 'the key never expires' },
  any: { flags: '--any', help: 'any network (removes the allowlist)' },
  force: { flags: '--force', help: "allow removing the app's last key (the app goes with it)" },
  'per-second': {
    flags: '--per-second <n>',
    help: `requests per second, on average (${RATE_LIMIT_LIMITS.perSecond.min} to ${RATE_LIMIT_LIMITS.perSecond.max}; 0.5: one every 2s)`,
  },
  burst: {
    flags: '--burst <m>',
    help: 'requests accepted at once (default: the rate rounded up, at least 1)',
  },
  default: { flags: '--default', help: "remove the app's own rate limit: the stack's default applies again" },
  'default-limit': {
    flags: '--default-limit <n>',
    help: "the stack's appRateLimit, shown for the apps without a limit of their own (the CLI cannot read it)",
  },
  'default-burst': { flags: '--default-burst <m>', help: "the stack's appRateBurst, with --default-limit" },
  'keys-out': {
    flags: '--keys-out <path>',
    help: 'write the new keys to this file, created with mode 0600 and never overwritten; - for standard output',
  },
  'dry-run': { flags: '--dry-run', help: 'check and say what would change; write nothing' },
  settle: {
    flags: '--settle <duration>',
    help: 'wait this long between copying and removing the old copies (default: the key cache TTL, plus 30s)',
  },
  shards: { flags: '--shards <n>', help: 'the shard count of a local registry (1 to 1024)' },
};

const COMMANDS: readonly CommandSpec[] = [
  {
    name: 'list',
    operands: '',
    summary: 'every App-id: its networks, rate limit, key ids and expiries (never a key)',
    options: ['default-limit', 'default-burst'],
    example: 'list --stack PaymentApi --json',
    build: (_, options) => ({ name: 'list', ...checkedDefaultLimit(options) }),
  },
  {
    name: 'add-app',
    operands: '<app-id>',
    summary: 'a new app with one fresh key, printed once on standard output',
    options: ['expires-in', 'plain', 'hash', 'key-prefix'],
    example: 'add-app partner-0001 --expires-in 365d --stack PaymentApi',
    build: ([appId = ''], options) => edit(newKeyRequest('add', appId, options)),
  },
  {
    name: 'rotate',
    operands: '<app-id>',
    summary: 'add a fresh key; the existing keys stay valid (until --grace ends)',
    options: ['expires-in', 'grace', 'plain', 'hash', 'key-prefix'],
    example: 'rotate partner-0001 --grace 7d --stack PaymentApi',
    build: ([appId = ''], options) => {
      const graceMs = optionalDuration(options, 'grace');
      const request = newKeyRequest('rotate', appId, options);
      return edit(graceMs === undefined ? request : { ...request, graceMs });
    },
  },
  {
    name: 'revoke',
    operands: '<app-id> <key-id>',
    summary: "remove one key (the app's last key only with --force)",
    options: ['force'],
    example: 'revoke partner-0001 0a1b2c3d4e5f --stack PaymentApi',
    build: ([appId = '', keyId = ''], options) =>
      edit({
        op: 'revoke',
        appId: checkedAppId(appId),
        keyId: checkedKeyId(keyId),
        force: flag(options, 'force'),
      }),
  },
  {
    name: 'remove-app',
    operands: '<app-id>',
    summary: 'remove an app and all its keys',
    options: [],
    example: 'remove-app partner-0001 --stack PaymentApi',
    build: ([appId = '']) => edit({ op: 'remove', appId: checkedAppId(appId) }),
  },
  {
    name: 'expire',
    operands: '<app-id> <key-id>',
    usage: 'expire <app-id> <key-id> (--in <duration> | --at <date-time> | --never)',
    summary: "set or clear one key's expiry",
    options: ['in', 'at', 'never'],
    example: 'expire partner-0001 0a1b2c3d4e5f --in 7d --stack PaymentApi',
    notes: `A date-time is ${TIMESTAMP_RULE}.`,
    build: ([appId = '', keyId = ''], options) =>
      edit({
        op: 'expire',
        appId: checkedAppId(appId),
        keyId: checkedKeyId(keyId),
        expiry: checkedExpiry(options),
      }),
  },
  {
    name: 'prune',
    operands: '[app-id]',
    usage: 'prune [<app-id>]',
    summary: 'remove the keys whose expiry has passed (of one app, or of all)',
    options: [],
    example: 'prune --stack PaymentApi',
    build: ([appId]) =>
      appId === undefined ? { name: 'prune-all' } : edit({ op: 'prune', appId: checkedAppId(appId) }),
  },
  {
    name: 'allow',
    operands: '<app-id> [cidr...]',
    usage: 'allow <app-id> (<cidr>... | --any)',
    summary: 'let the app call only from these networks (added to its allowlist), or from --any',
    options: ['any'],
    example: 'allow partner-0001 203.0.113.0/24 2001:db8::/32 --stack PaymentApi',
    notes: CIDR_RULE,
    build: ([appId = '', ...cidrs], options) => edit(allowRequest(checkedAppId(appId), cidrs, options)),
  },
  {
    name: 'disallow',
    operands: '<app-id> <cidr...>',
    usage: 'disallow <app-id> <cidr>...',
    summary: "remove networks from the app's allowlist (none left: no network at all)",
    options: [],
    example: 'disallow partner-0001 203.0.113.0/24 --stack PaymentApi',
    notes: CIDR_RULE,
    build: ([appId = '', ...cidrs]) =>
      edit({
        op: 'network',
        appId: checkedAppId(appId),
        network: { kind: 'disallow', cidrs: checkedCidrs(cidrs) },
      }),
  },
  {
    name: 'limit',
    operands: '<app-id>',
    usage: 'limit <app-id> (--per-second <n> [--burst <m>] | --default)',
    summary: 'give the app a rate limit of its own, or --default to remove it',
    options: ['per-second', 'burst', 'default'],
    example: 'limit partner-0001 --per-second 20 --burst 40 --stack PaymentApi',
    notes:
      `A rate is ${RATE_LIMIT_LIMITS.perSecond.min} to ${RATE_LIMIT_LIMITS.perSecond.max} requests per second; a burst is a whole ` +
      `number from ${RATE_LIMIT_LIMITS.burst.min} to ${RATE_LIMIT_LIMITS.burst.max}.\nAn app's own rate limit takes effect within ` +
      "the key cache's TTL, and only where the stack is deployed with appRateLimit.",
    build: ([appId = ''], options) =>
      edit({ op: 'limit', appId: checkedAppId(appId), limit: checkedLimit(options) }),
  },
  {
    name: 'where',
    operands: '<app-id>',
    summary: 'the shard that holds the app (or would), and its secret or file',
    options: [],
    example: 'where partner-0001 --stack PaymentApi',
    build: ([appId = '']) => ({ name: 'where', appId: checkedAppId(appId) }),
  },
  {
    name: 'apply',
    operands: '<file>',
    usage: 'apply <file> [--keys-out <path>|-] [--dry-run]',
    summary: 'many changes at once (docs/keys.md: the apply file), one write per shard',
    options: ['keys-out', 'dry-run', 'key-prefix'],
    example: 'apply changes.json --keys-out .local/new.keys.jsonl --stack PaymentApi',
    build: ([file = ''], options) => ({
      name: 'apply',
      file,
      keysOut: nonEmpty(text(options, 'keys-out')),
      dryRun: flag(options, 'dry-run'),
    }),
  },
  {
    name: 'reshard',
    operands: '',
    usage: 'reshard [--settle <duration>] [--shards <n>] [--dry-run]',
    summary: 'move the apps not in their home shard (after a deploy that changed keyShards)',
    options: ['settle', 'shards', 'dry-run'],
    example: 'reshard --dry-run --stack PaymentApi',
    build: (_, options, target) => {
      const settleMs = optionalDuration(options, 'settle');
      const shardsText = text(options, 'shards');
      const shards = shardsText === undefined ? undefined : checkedShards(shardsText);
      if (shards !== undefined && target.kind !== 'registry-file')
        throw new UsageError(shardsMisplaced(target));
      return { name: 'reshard', shards, settleMs, dryRun: flag(options, 'dry-run') };
    },
  },
  {
    name: 'leaked',
    operands: '',
    usage: 'leaked [--rotate --grace <duration>] [--dry-run] < keys (one per line)',
    summary:
      "end leaked keys read from standard input: find each one's app in every shard, revoke it (or --rotate)",
    options: ['rotate', 'leaked-grace', 'keys-out', 'dry-run', 'key-prefix'],
    example:
      'leaked --stack PaymentApi < leaked.txt\n  pbpaste | npm run -s keys -- leaked --stack PaymentApi',
    notes:
      'The keys come from standard input, one per line (at most 1 MiB), never from the command line. Each is found by\n' +
      'its digest in every shard (BatchGetSecretValue, 20 shards a call) and revoked at once: it expires now, and list\n' +
      'shows it as expired until prune. --rotate --grace <duration> gives its app a new key instead (on standard\n' +
      'output, the report then on standard error, or --keys-out <file>) and the leaked key expires after the grace.\n' +
      'One compare-and-swap write per shard touched. Each line of the report names the app, the key id, the shard and\n' +
      'what was done, never the key.\n' +
      'Exit 0: every key found and handled; 3: some not found (nothing written for those); 1: a write failed; 2: bad input.',
    build: (_, options) => leakedCommand(options),
  },
  {
    name: 'init',
    operands: '',
    usage: 'init --shards <n> --registry-file <path>',
    summary: 'create a local registry of n empty shards',
    options: ['shards'],
    example: 'init --shards 4 --registry-file .local/registry/registry.json',
    build: (_, options, target) => {
      const shardsText = text(options, 'shards');
      if (shardsText === undefined) throw new UsageError('usage: init --shards <n> --registry-file <path>');
      const shards = checkedShards(shardsText);
      if (target.kind === 'registry-file') return { name: 'init', shards, path: target.path };
      throw new UsageError(
        'init creates a local registry: give --registry-file <path>; a stack creates its own (cdk deploy -c keyShards=<n>)',
      );
    },
  },
];

/** Why reshard --shards does not fit a target other than a local registry, naming the target it was about. */
function shardsMisplaced(target: Target): string {
  return target.kind === 'file' || target.kind === 'secret'
    ? `--shards changes a local registry's shard count; a single ${target.kind === 'file' ? 'key file' : 'secret'} has one shard (give --registry-file <path>)`
    : 'the stack owns its shard count: deploy with -c keyShards=<n> -c keyShardsPrevious=<current>, then run ' +
        'reshard without --shards (--shards is for a local registry)';
}

const ENVIRONMENT_HELP = `
Where the keys are: exactly one of the target options (a flag wins over the environment), or one of
${TARGETS.map(({ flag, variable }) => `  ${variable.padEnd(20)} as --${flag}`).join('\n')}
Region, credentials and endpoint come from the standard AWS environment (AWS_REGION, AWS_PROFILE,
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL).`;

const NOTES = `
A duration is ${DURATION_RULE}.
A new key is printed once, on standard output, and nowhere else; a key never goes on the command line.
For --json, run npm with -s (npm run -s keys -- ...) so npm's banner stays off standard output.`;

const usageOf = (spec: CommandSpec | undefined): string =>
  spec === undefined ? '' : (spec.usage ?? `${spec.name} ${spec.operands}`.trim());

/** Replaces commander's error with one line of our own; never echoes what was typed, except a known name. */
function usageErrorOf(error: CommanderError, spec: CommandSpec | undefined): UsageError {
  const suggestion = /\(Did you mean ([\w-]+)\?\)/.exec(error.message)?.[1];
  const didYouMean = suggestion === undefined ? '' : ` (did you mean ${suggestion}?)`;
  switch (error.code) {
    case 'commander.unknownCommand':
      return new UsageError(
        `unknown command${didYouMean}; expected ${listed(
          COMMANDS.map(({ name }) => name),
          'or',
        )}`,
      );
    case 'commander.unknownOption': {
      const option = /'(--?[a-z][a-z-]{0,30})'/.exec(error.message)?.[1];
      const takers = COMMANDS.filter((command) => command.options.some((name) => `--${name}` === option))
        .map(({ name }) => name)
        .sort();
      if (option !== undefined && takers.length > 0) {
        return new UsageError(`${option} applies only to ${listed(takers, 'and')}`);
      }
      return new UsageError(`unknown option${option === undefined ? '' : ` '${option}'`}${didYouMean}`);
    }
    case 'commander.missingArgument':
    case 'commander.excessArguments':
      return new UsageError(`usage: ${usageOf(spec)}`);
    default:
      return new UsageError(error.message.replace(/^error: /, '').split('\n', 1)[0] ?? 'invalid arguments');
  }
}

/** What commander would misread: nothing before the command but --help, and an option's value left out. */
function checkArgvShape(argv: readonly string[]): void {
  // The command comes first; before it, commander knows only --help.
  const [first] = argv;
  if (first === undefined || (first.startsWith('-') && !['-h', '--help'].includes(first))) {
    throw new UsageError('no command given; run with --help for usage');
  }
  // Commander would take the next option as the value (`--expires-in --stack x`), and then complain of something else.
  const valueTaking = [
    ...Object.values(OPTIONS).map(({ flags }) => flags),
    ...TARGETS.map((t) => `--${t.flag} ${t.value}`),
  ];
  argv.forEach((arg, position) => {
    const shape = valueTaking.find((flags) => flags.startsWith(`${arg} <`));
    const next = argv[position + 1];
    if (shape !== undefined && (next === undefined || /^--[a-z]/.test(next))) {
      throw new UsageError(`${arg} needs a value: ${shape}`);
    }
  });
}

/**
 * The program: each command runs `execute` with what was asked, checked. Resolves with the exit code of a help
 * request; throws UsageError for bad input, and whatever `execute` throws.
 */
export async function runProgram(
  argv: readonly string[],
  env: Env,
  out: { readonly stdout: (text: string) => void },
  execute: (invocation: Invocation) => Promise<void>,
): Promise<void> {
  checkArgvShape(argv);
  const program = new Program('keys')
    .usage('<command> [options]')
    .description('Edit the key registry of payment-api: apps, their keys, networks and rate limits.')
    .exitOverride()
    .showSuggestionAfterError()
    .configureOutput({
      writeOut: out.stdout,
      writeErr: out.stdout,
      outputError: () => undefined,
      // The same help on every terminal (and in the goldens).
      getOutHelpWidth: () => 120,
      getErrHelpWidth: () => 120,
    })
    .addHelpText(
      'after',
      `${ENVIRONMENT_HELP}\n${NOTES}\n\nRun "keys help <command>" for a command's options.`,
    );
  for (const spec of COMMANDS) {
    const command = program.command(spec.name).description(spec.summary).exitOverride();
    if (spec.operands !== '') command.arguments(spec.operands);
    for (const name of spec.options) command.option(OPTIONS[name]?.flags ?? `--${name}`, OPTIONS[name]?.help);
    for (const target of TARGETS) {
      command.option(`--${target.flag} ${target.value}`, `${target.what} (env ${target.variable})`);
    }
    command
      .option('--json', 'machine-readable output')
      .addHelpText(
        'after',
        `\nExample:\n  npm run keys -- ${spec.example}\n${ENVIRONMENT_HELP}\n${NOTES}` +
          (spec.notes === undefined ? '' : `\n${spec.notes}`),
      )
      .action(async function (this: Program) {
        const options = this.opts<Options>();
        const target = resolveTarget(options, env);
        await execute({
          command: spec.build(this.args, options, target),
          target,
          json: flag(options, 'json'),
          keyPrefix: spec.options.includes('key-prefix') ? keyPrefixOf(options, env) : undefined,
        });
      });
  }
  try {
    await program.parseAsync([...argv], { from: 'user' });
  } catch (error) {
    if (!(error instanceof CommanderError)) throw error;
    if (error.exitCode === 0 || error.code === 'commander.help') return;
    const name = argv.find((arg) => !arg.startsWith('-'));
    throw usageErrorOf(
      error,
      COMMANDS.find((spec) => spec.name === name),
    );
  }
}
