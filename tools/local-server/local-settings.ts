import { resolve } from 'node:path';
import { parseLogLevel, type LogLevel } from '../../shared/logger';
import { ENV, readKeyCacheSettings, type KeyCacheSettings } from '../../lambda/payment/settings';
import { nonEmpty } from '../common/args';
import { KEY_STORE_ENV } from '../common/key-store-env';

/** The local server listens on loopback only: it is a development tool, not a deployment. */
export const LOCAL_HOST = '127.0.0.1';
export const DEFAULT_PORT = 3000;
export const DEFAULT_KEYS_FILE = '.local/keys.json';

export const LOCAL_ENV = {
  port: 'PORT',
  keysFile: KEY_STORE_ENV.keysFile,
} as const;

export type KeysLocation =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'secretsManager'; readonly secretId: string };

export interface LocalSettings extends KeyCacheSettings {
  readonly host: string;
  /** 0 lets the system pick a free port. */
  readonly port: number;
  readonly keys: KeysLocation;
  readonly logLevel: LogLevel;
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

/**
 * Reads the local server's settings. Keys come from Secrets Manager when KEYS_SECRET_ID is set (with the
 * standard AWS environment: region, credentials, AWS_ENDPOINT_URL), otherwise from KEYS_FILE, resolved
 * against `cwd`. The key cache reads the same variables as the Lambda.
 */
export function readLocalSettings(env: Environment, cwd: string): LocalSettings {
  const secretId = nonEmpty(env[ENV.secretId]);
  const keys: KeysLocation =
    secretId !== undefined
      ? { kind: 'secretsManager', secretId }
      : { kind: 'file', path: resolve(cwd, nonEmpty(env[LOCAL_ENV.keysFile]) ?? DEFAULT_KEYS_FILE) };
  return {
    host: LOCAL_HOST,
    port: readPort(env),
    keys,
    logLevel: parseLogLevel(env[ENV.logLevel], ENV.logLevel),
    ...readKeyCacheSettings(env),
  };
}
