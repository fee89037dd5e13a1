import type { KeyFormatPolicy } from '../../shared/keys/credential-screen';
import { readKeyPrefix } from '../../shared/keys/key-format';
import { readRegistryLayout, type RegistryLayout } from '../../shared/keys/registry';
import { parseLogLevel, type LogLevel } from '../../shared/logger';
import { DEFAULT_METRICS_NAMESPACE, METRICS_ENV } from './metric-names';

/**
 * Environment variable names, shared with the stack that sets them. The registry's own (KEY_SHARDS, ...) are
 * REGISTRY_ENV in shared/keys/registry.ts; KEYS_SECRET_ID is its shard 0, the one secret before shards.
 */
export const ENV = {
  secretId: 'KEYS_SECRET_ID',
  cacheTtlSeconds: 'KEY_CACHE_TTL_SECONDS',
  maxStaleSeconds: 'KEY_MAX_STALE_SECONDS',
  keyExpiryWarningDays: 'KEY_EXPIRY_WARNING_DAYS',
  logLevel: 'LOG_LEVEL',
  /** The stack's key prefix (context `keyPrefix`): keys starting with `<prefix>_` are checked before any lookup. */
  keyPrefix: 'KEY_PREFIX',
  /** `false` refuses keys without the prefix before any lookup (context `legacyKeys`); absent: `true`. */
  legacyKeys: 'LEGACY_KEYS',
  /** Set by Lambda when the function's advanced logging controls name an application log level. */
  lambdaLogLevel: 'AWS_LAMBDA_LOG_LEVEL',
} as const;

/** The service name and namespace a Lambda started without them (a local run of the bundle) reports. */
export const DEFAULT_SERVICE_NAME = 'PaymentApi';

export const DEFAULT_CACHE_TTL_SECONDS = 60;
export const DEFAULT_MAX_STALE_SECONDS = 15 * 60;

/** The ranges the stack accepts for the key cache; the Lambda and the local server refuse the same values. */
export const KEY_CACHE_LIMITS = {
  ttlSeconds: { min: 1, max: 3600 },
  maxStaleSeconds: { min: 0, max: 86_400 },
} as const;

export const DEFAULT_KEY_EXPIRY_WARNING_DAYS = 14;

/** The warning window the stack accepts, in days: less than a day would warn too late for anyone to act. */
export const KEY_EXPIRY_WARNING_LIMITS = { days: { min: 1, max: 365 } } as const;

const DAY_MS = 86_400_000;

export interface KeyCacheSettings {
  readonly ttlMs: number;
  readonly maxStaleMs: number;
}

export interface LambdaSettings extends KeyCacheSettings {
  /** The key registry: one secret (KEYS_SECRET_ID alone), or several shards. */
  readonly registry: RegistryLayout;
  readonly logLevel: LogLevel;
  /** The stack name: the `Service` dimension of every metric and the `service` field of every log line. */
  readonly serviceName: string;
  readonly metricsNamespace: string;
  /** The key prefix, and whether keys without it are looked up. */
  readonly keyFormat: KeyFormatPolicy;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** A whole number of `unit` within `range`; absent or empty means the default. Anything else is a configuration error. */
function readWholeNumber(
  env: Environment,
  name: string,
  defaultValue: number,
  range: { readonly min: number; readonly max: number },
  unit: 'seconds' | 'days',
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultValue;
  const value = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(value >= range.min && value <= range.max)) {
    throw new Error(
      `${name} must be a whole number of ${unit} from ${range.min} to ${range.max}, got "${raw}"`,
    );
  }
  return value;
}

export function readKeyCacheSettings(env: Environment): KeyCacheSettings {
  const { ttlSeconds, maxStaleSeconds } = KEY_CACHE_LIMITS;
  return {
    ttlMs: readWholeNumber(env, ENV.cacheTtlSeconds, DEFAULT_CACHE_TTL_SECONDS, ttlSeconds, 'seconds') * 1000,
    maxStaleMs:
      readWholeNumber(env, ENV.maxStaleSeconds, DEFAULT_MAX_STALE_SECONDS, maxStaleSeconds, 'seconds') * 1000,
  };
}

/** Lambda's application log levels (advanced logging controls), in the handler's four. */
const LAMBDA_LOG_LEVELS: Readonly<Record<string, LogLevel>> = {
  TRACE: 'debug',
  DEBUG: 'debug',
  INFO: 'info',
  WARN: 'warn',
  ERROR: 'error',
  FATAL: 'error',
};

/** The level Lambda's own logging controls ask for, when they do; else LOG_LEVEL (set by the stack). */
function readLogLevel(env: Environment): LogLevel {
  const lambdaLevel = env[ENV.lambdaLogLevel];
  if (lambdaLevel !== undefined && Object.hasOwn(LAMBDA_LOG_LEVELS, lambdaLevel)) {
    return LAMBDA_LOG_LEVELS[lambdaLevel] ?? 'info';
  }
  return parseLogLevel(env[ENV.logLevel], ENV.logLevel);
}

/** A dimension value CloudWatch accepts: 1 to 255 visible ASCII characters; absent or empty: the default. */
function readName(env: Environment, name: string, defaultValue: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultValue;
  if (!/^[\x21-\x7e]{1,255}$/.test(raw)) {
    throw new Error(`${name} must be 1 to 255 visible ASCII characters, got "${raw}"`);
  }
  return raw;
}

/** KEY_PREFIX and LEGACY_KEYS; absent or empty: the defaults (`pay`, legacy keys looked up). */
export function readKeyFormatPolicy(env: Environment): KeyFormatPolicy {
  const prefix = readKeyPrefix(env[ENV.keyPrefix], ENV.keyPrefix);
  const rawLegacy = env[ENV.legacyKeys];
  if (rawLegacy !== undefined && rawLegacy !== '' && rawLegacy !== 'true' && rawLegacy !== 'false') {
    throw new Error(`${ENV.legacyKeys} must be true or false, got "${rawLegacy}"`);
  }
  return { prefix, legacyKeys: rawLegacy !== 'false' };
}

/**
 * Keys that expire within this window count in `KeysExpiringSoon`. Measured by the monitor function for every
 * shard, no longer by the payment Lambda, which sees only the shards its requests needed.
 */
export function readKeyExpiryWarningMs(env: Environment): number {
  return (
    readWholeNumber(
      env,
      ENV.keyExpiryWarningDays,
      DEFAULT_KEY_EXPIRY_WARNING_DAYS,
      KEY_EXPIRY_WARNING_LIMITS.days,
      'days',
    ) * DAY_MS
  );
}

/** Throws on a missing or invalid setting, so a bad environment fails the Lambda's init instead of serving. */
export function readLambdaSettings(env: Environment): LambdaSettings {
  return {
    registry: readRegistryLayout(env),
    logLevel: readLogLevel(env),
    serviceName: readName(env, METRICS_ENV.serviceName, DEFAULT_SERVICE_NAME),
    metricsNamespace: readName(env, METRICS_ENV.namespace, DEFAULT_METRICS_NAMESPACE),
    keyFormat: readKeyFormatPolicy(env),
    ...readKeyCacheSettings(env),
  };
}
