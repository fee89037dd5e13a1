import { resolve } from 'node:path';
import { parseLogLevel, type LogLevel } from '../../shared/logger';
import {
  ENV,
  readKeyCacheSettings,
  readKeyFormatPolicy,
  type KeyCacheSettings,
} from '../../lambda/payment/settings';
import type { KeyFormatPolicy } from '../../shared/keys/credential-screen';
import {
  readLimiterFailure,
  RATE_LIMIT_BUDGET_LIMITS,
  RATE_LIMIT_ENV,
  readDefaultLimit,
  type LimiterFailure,
} from '../../lambda/payment/rate-limit/settings';
import { LIMITER_WORST_ADDED_MS } from '../../lambda/payment/rate-limit/limiter';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { nonEmpty } from '../common/args';
import { KEY_STORE_ENV } from '../common/key-store-env';
import { stackNameProblem } from '../common/stack-name';
import { REGISTRY_ENV } from '../../shared/keys/registry';
import { shortened } from '../common/text';

/** The local server listens on loopback only: it is a development tool, not a deployment. */
export const LOCAL_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3000;
export const DEFAULT_KEYS_FILE = '.local/keys.json';

export const LOCAL_ENV = {
  port: 'PORT',
  keysFile: KEY_STORE_ENV.keysFile,
  /** Every app's limit, as the stack's appRateLimit context sets it for the Lambda. */
  appRateLimit: 'APP_RATE_LIMIT',
  appRateBurst: 'APP_RATE_BURST',
  appRateLimitFailure: 'APP_RATE_LIMIT_FAILURE',
  /** With it, the limit is counted in this DynamoDB table (shared by every server using it) instead of in memory. */
  rateLimitTable: RATE_LIMIT_ENV.table,
  /** The Lambda's test-only variable: more time for the shared limiter against an emulator. */
  rateLimitBudgetMs: RATE_LIMIT_ENV.budgetMs,
} as const;

/** DynamoDB's table names (3 to 255 of these characters), or a table's ARN. */
const TABLE_NAME = /^(arn:aws[a-z-]*:dynamodb:[a-z0-9-]+:\d{12}:table\/)?[A-Za-z0-9_.-]{3,255}$/;

/** How the server applies per-app rate limits. */
export type LocalRateLimiting =
  /** No limiter: an app's own rateLimit in the keys is not enforced (the handler warns once per refresh). */
  | { readonly kind: 'off' }
  /** Counted in this process: one server needs no shared store. */
  | { readonly kind: 'memory'; readonly defaultLimit: RateLimit }
  /** Counted in a DynamoDB table, as the deployed Lambda counts. */
  | {
      readonly kind: 'dynamodb';
      readonly defaultLimit: RateLimit;
      readonly tableName: string;
      readonly failure: LimiterFailure;
      /** The most the limiter may add to a request, every DynamoDB call included. */
      readonly budgetMs: number;
    };

export type KeysLocation =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'secretsManager'; readonly secretId: string }
  /** A local registry: its registry.json (KEYS_REGISTRY_FILE), resolved against the working directory. */
  | { readonly kind: 'registryFile'; readonly path: string }
  /** A key registry in Secrets Manager, by its manifest secret's name or ARN (KEYS_REGISTRY). */
  | { readonly kind: 'registry'; readonly manifestId: string }
  /** A deployed stack's keys: its registry, or its one keys secret (KEYS_STACK). */
  | { readonly kind: 'stack'; readonly stackName: string };

export interface LocalSettings extends KeyCacheSettings {
  readonly host: string;
  /** 0 lets the system pick a free port. */
  readonly port: number;
  readonly keys: KeysLocation;
  readonly logLevel: LogLevel;
  readonly rateLimiting: LocalRateLimiting;
  /** KEY_PREFIX and LEGACY_KEYS, as the Lambda reads them: the demo key's prefix, and what is refused unread. */
  readonly keyFormat: KeyFormatPolicy;
}

type Environment = Readonly<Record<string, string | undefined>>;

function readPort(env: Environment): number {
  const raw = env[LOCAL_ENV.port];
  if (raw === undefined || raw === '') return DEFAULT_PORT;
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 0 && port <= 65_535)) {
    throw new Error(`${LOCAL_ENV.port} must be a port number from 0 to 65535, got "${raw}"`);
  }
  return port;
}

function readBudgetMs(env: Environment): number {
  const raw = nonEmpty(env[LOCAL_ENV.rateLimitBudgetMs]);
  if (raw === undefined) return LIMITER_WORST_ADDED_MS;
  const budgetMs = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(budgetMs >= RATE_LIMIT_BUDGET_LIMITS.min && budgetMs <= RATE_LIMIT_BUDGET_LIMITS.max)) {
    throw new Error(
      `${LOCAL_ENV.rateLimitBudgetMs} must be a whole number of milliseconds from ${RATE_LIMIT_BUDGET_LIMITS.min} to ${RATE_LIMIT_BUDGET_LIMITS.max}, got "${raw}"`,
    );
  }
  return budgetMs;
}

/**
 * APP_RATE_LIMIT (and APP_RATE_BURST) switch limits on, in memory; RATE_LIMIT_TABLE moves the count to DynamoDB.
 * Settings that only mean something with another (a burst without a rate, a failure mode or a deadline without a
 * table) are refused rather than ignored, so a typo never passes for a limit that applies.
 */
export function readRateLimiting(env: Environment): LocalRateLimiting {
  const defaultLimit = readDefaultLimit(env, LOCAL_ENV.appRateLimit, LOCAL_ENV.appRateBurst);
  const tableName = nonEmpty(env[LOCAL_ENV.rateLimitTable]);
  if (defaultLimit === undefined) {
    const orphan = [
      LOCAL_ENV.rateLimitTable,
      LOCAL_ENV.appRateLimitFailure,
      LOCAL_ENV.rateLimitBudgetMs,
    ].find((name) => nonEmpty(env[name]) !== undefined);
    if (orphan !== undefined) throw new Error(`${orphan} needs ${LOCAL_ENV.appRateLimit}`);
    return { kind: 'off' };
  }
  if (tableName === undefined) {
    // The in-memory limiter always answers: there is no failure to choose a behaviour for.
    const orphan = [LOCAL_ENV.appRateLimitFailure, LOCAL_ENV.rateLimitBudgetMs].find(
      (name) => nonEmpty(env[name]) !== undefined,
    );
    if (orphan !== undefined) throw new Error(`${orphan} needs ${LOCAL_ENV.rateLimitTable}`);
    return { kind: 'memory', defaultLimit };
  }
  if (!TABLE_NAME.test(tableName)) {
    throw new Error(
      `${LOCAL_ENV.rateLimitTable} must be a DynamoDB table name (3 to 255 letters, digits, "_", "." or "-") or a table ARN, got "${shortened(tableName)}"`,
    );
  }
  return {
    kind: 'dynamodb',
    defaultLimit,
    tableName,
    failure: readLimiterFailure(env, LOCAL_ENV.appRateLimitFailure),
    budgetMs: readBudgetMs(env),
  };
}

/** The variables that name a registry of shards, read as the key CLI reads them (one setting points both). */
const REGISTRY_VARIABLES = [KEY_STORE_ENV.stack, KEY_STORE_ENV.registry, KEY_STORE_ENV.registryFile] as const;

/** The Lambda's registry variables: the stack sets them; the local server finds the shards from the manifest. */
const LAMBDA_REGISTRY_VARIABLES = [
  REGISTRY_ENV.shards,
  REGISTRY_ENV.previousShards,
  REGISTRY_ENV.namePrefix,
] as const;

function listed(names: readonly string[]): string {
  return names.length === 2
    ? `both ${names[0] ?? ''} and ${names[1] ?? ''} are`
    : `${names.slice(0, -1).join(', ')} and ${names.at(-1) ?? ''} are`;
}

/**
 * Where the keys are. A registry of shards (KEYS_STACK, KEYS_REGISTRY or KEYS_REGISTRY_FILE) must be the only place
 * named; without one, as before shards: Secrets Manager when KEYS_SECRET_ID is set (KEYS_FILE is then ignored),
 * otherwise KEYS_FILE, resolved against `cwd`. The Lambda's KEY_SHARDS and its companions are refused rather than
 * ignored: read beside KEYS_SECRET_ID alone, they would serve shard 0 and refuse every app of the others.
 */
export function readKeysLocation(env: Environment, cwd: string): KeysLocation {
  const lambdaOnly = LAMBDA_REGISTRY_VARIABLES.find((name) => nonEmpty(env[name]) !== undefined);
  if (lambdaOnly !== undefined) {
    throw new Error(
      `${lambdaOnly} is the Lambda's: point the local server at a registry of shards with ` +
        `${KEY_STORE_ENV.registry} (its manifest secret), ${KEY_STORE_ENV.stack} or ${KEY_STORE_ENV.registryFile}`,
    );
  }
  const registry = REGISTRY_VARIABLES.filter((name) => nonEmpty(env[name]) !== undefined);
  const [named] = registry;
  if (named !== undefined) {
    const others = [...REGISTRY_VARIABLES, KEY_STORE_ENV.secretId, KEY_STORE_ENV.keysFile].filter(
      (name) => name !== named && nonEmpty(env[name]) !== undefined,
    );
    if (others.length > 0) {
      throw new Error(`${listed([named, ...others])} set: the keys come from one place, unset all but one`);
    }
    const value = env[named] ?? '';
    if (named === KEY_STORE_ENV.registryFile) return { kind: 'registryFile', path: resolve(cwd, value) };
    if (named === KEY_STORE_ENV.registry) return { kind: 'registry', manifestId: value };
    const problem = stackNameProblem(value);
    if (problem !== undefined) throw new Error(`invalid ${KEY_STORE_ENV.stack}: ${problem}`);
    return { kind: 'stack', stackName: value };
  }
  const secretId = nonEmpty(env[ENV.secretId]);
  return secretId !== undefined
    ? { kind: 'secretsManager', secretId }
    : { kind: 'file', path: resolve(cwd, nonEmpty(env[LOCAL_ENV.keysFile]) ?? DEFAULT_KEYS_FILE) };
}

/**
 * Reads the local server's settings: where the keys are (readKeysLocation; Secrets Manager with the standard AWS
 * environment: region, credentials, AWS_ENDPOINT_URL). The key cache reads the same variables as the Lambda; rate
 * limits are read by readRateLimiting.
 */
export function readLocalSettings(env: Environment, cwd: string): LocalSettings {
  const keys = readKeysLocation(env, cwd);
  return {
    host: LOCAL_HOST,
    port: readPort(env),
    keys,
    logLevel: parseLogLevel(env[ENV.logLevel], ENV.logLevel),
    ...readKeyCacheSettings(env),
    rateLimiting: readRateLimiting(env),
    keyFormat: readKeyFormatPolicy(env),
  };
}
