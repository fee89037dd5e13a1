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

export interface KeyCacheSettings {
  readonly ttlMs: number;
  readonly maxStaleMs: number;
}

export interface LambdaSettings extends KeyCacheSettings {
  readonly secretId: string;
  readonly logLevel: LogLevel;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Whole seconds, zero or more; absent or empty means the default. Anything else is a configuration error. */
function readSeconds(env: Environment, name: string, defaultSeconds: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return defaultSeconds;
  if (!/^\d+$/.test(raw)) throw new Error(`${name} must be a whole number of seconds, got "${raw}"`);
  return Number(raw);
}

export function readKeyCacheSettings(env: Environment): KeyCacheSettings {
  return {
    ttlMs: readSeconds(env, ENV.cacheTtlSeconds, DEFAULT_CACHE_TTL_SECONDS) * 1000,
    maxStaleMs: readSeconds(env, ENV.maxStaleSeconds, DEFAULT_MAX_STALE_SECONDS) * 1000,
  };
}

export function readLambdaSettings(env: Environment): LambdaSettings {
  const secretId = env[ENV.secretId];
  if (secretId === undefined || secretId === '') throw new Error(`${ENV.secretId} must name the keys secret`);
  return { secretId, logLevel: parseLogLevel(env[ENV.logLevel]), ...readKeyCacheSettings(env) };
}
