import { parseLogLevel, type LogLevel } from '../shared/logger';

/** Environment variable names, shared with the stack that sets them. */
export const ENV = {
  secretId: 'KEYS_SECRET_ID',
  cacheTtlSeconds: 'KEY_CACHE_TTL_SECONDS',
  maxStaleSeconds: 'KEY_MAX_STALE_SECONDS',
  logLevel: 'LOG_LEVEL',
} as const;

export const DEFAULT_CACHE_TTL_SECONDS = 60;
export const DEFAULT_MAX_STALE_SECONDS = 15 * 60;

/** The ranges the stack accepts for the key cache; the Lambda and the local server refuse the same values. */
export const KEY_CACHE_LIMITS = {
  ttlSeconds: { min: 1, max: 3600 },
  maxStaleSeconds: { min: 0, max: 86_400 },
} as const;

export interface KeyCacheSettings {
  readonly ttlMs: number;
  readonly maxStaleMs: number;
}

export interface LambdaSettings extends KeyCacheSettings {
  readonly secretId: string;
  readonly logLevel: LogLevel;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Whole seconds within `range`; absent or empty means the default. Anything else is a configuration error. */
function readSeconds(
  env: Environment,
  name: string,
  defaultSeconds: number,
  range: { readonly min: number; readonly max: number },
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultSeconds;
  const seconds = /^\d{1,9}$/.test(raw) ? Number(raw) : NaN;
  if (!(seconds >= range.min && seconds <= range.max)) {
    throw new Error(
      `${name} must be a whole number of seconds from ${range.min} to ${range.max}, got "${raw}"`,
    );
  }
  return seconds;
}

export function readKeyCacheSettings(env: Environment): KeyCacheSettings {
  const { ttlSeconds, maxStaleSeconds } = KEY_CACHE_LIMITS;
  return {
    ttlMs: readSeconds(env, ENV.cacheTtlSeconds, DEFAULT_CACHE_TTL_SECONDS, ttlSeconds) * 1000,
    maxStaleMs: readSeconds(env, ENV.maxStaleSeconds, DEFAULT_MAX_STALE_SECONDS, maxStaleSeconds) * 1000,
  };
}

/** Throws on a missing or invalid setting, so a bad environment fails the Lambda's init instead of serving. */
export function readLambdaSettings(env: Environment): LambdaSettings {
  const secretId = env[ENV.secretId];
  if (secretId === undefined || secretId === '') throw new Error(`${ENV.secretId} must name the keys secret`);
  return {
    secretId,
    logLevel: parseLogLevel(env[ENV.logLevel], ENV.logLevel),
    ...readKeyCacheSettings(env),
  };
}
