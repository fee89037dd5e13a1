import { DEFAULT_KEY_PREFIX, isKeyPrefix, KEY_PREFIX_RULE } from '../../shared/keys/key-format';
import { readRegistryLayout, type RegistryLayout } from '../../shared/keys/registry';
import type { CallBounds } from '../../shared/aws/call-bounds';
import { parseLogLevel, type LogLevel } from '../../shared/logger';

/**
 * The secret scanning function's settings: what the stack sets (SCANNING_ENV, and the registry's REGISTRY_ENV) and
 * the fixed bounds of its work. The route is `POST /secret-scanning`, GitHub's secret scanning partner program
 * posts there (docs/operations.md, "A partner's key leaked").
 */

export const SECRET_SCANNING_ROUTE = { path: '/secret-scanning', method: 'POST' } as const;

export const SCANNING_ENV = {
  keysUrl: 'SECRET_SCANNING_KEYS_URL',
  action: 'SECRET_SCANNING_ACTION',
  keyPrefix: 'KEY_PREFIX',
  alarmTopicArn: 'ALARM_TOPIC_ARN',
  logLevel: 'LOG_LEVEL',
} as const;

/** GitHub's public keys for secret scanning alerts, in its format `{"public_keys": [...]}`. */
export const DEFAULT_KEYS_URL = 'https://api.github.com/meta/public_keys/secret_scanning';

/** What a true positive does: `revoke` ends the key in its shard, `report` only tells (topic and log). */
export const SCANNING_ACTIONS = ['revoke', 'report'] as const;
export type ScanningAction = (typeof SCANNING_ACTIONS)[number];
export const DEFAULT_SCANNING_ACTION: ScanningAction = 'revoke';

/**
 * Limits of one report. GitHub batches the tokens it finds; a token of ours is 42 to 55 characters and its entry,
 * with the URL of where it was found, a few hundred bytes: 1,000 of them fit well within 512 KiB. The body is judged
 * by its length before its signature is checked, so no request costs work in proportion to a larger body.
 */
export const REPORT_LIMITS = {
  maxBodyBytes: 512 * 1024,
  maxTokens: 1_000,
  maxTokenLength: 1_024,
  maxTypeLength: 256,
  maxUrlLength: 2_048,
  maxSourceLength: 256,
} as const;

/**
 * Fetching GitHub's public keys: answered within 3 s or not at all, and at most 64 KiB (the document is about 1 KB
 * for its two or three keys). An identifier not in the cache refreshes it at most once a minute, so forged
 * identifiers cannot turn each request into a fetch; the cache is refreshed anyway once an hour, so a key GitHub
 * withdraws stops being accepted within the hour.
 */
export const PUBLIC_KEY_LIMITS = {
  fetchDeadlineMs: 3_000,
  maxDocumentBytes: 64 * 1024,
  minRefreshIntervalMs: 60_000,
  maxAgeMs: 3_600_000,
} as const;

/**
 * Bounds on each AWS call. API Gateway waits 29 s for an answer: every shard is read in BatchGetSecretValue calls of
 * 20, 4 at a time (256 shards: 4 rounds), and the shards touched are written 4 at a time, so each call must end
 * within a few seconds. A write is idempotent here (a key already ended is not ended again), so GitHub's retry of a
 * request that timed out is safe.
 */
export const SCANNING_CALL_BOUNDS: CallBounds = {
  maxAttempts: 2,
  connectionTimeoutMs: 1_000,
  attemptTimeoutMs: 2_000,
  callDeadlineMs: 5_000,
};

/** Calls in flight at once, reads and writes alike. */
export const SCANNING_CONCURRENT_CALLS = 4;
/** A compare-and-swap write that lost a race is tried again from a fresh read, this many times in all. */
export const MAX_WRITE_ATTEMPTS = 3;

/** Loopback addresses: the only ones a keys URL may name over plain http (tests serve their keys there). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Why a public keys URL is refused, in one line that does not repeat it; undefined when it may be used: https to
 * any host, or http to a loopback address, no credentials in it.
 */
export function keysUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return undefined;
  return 'must use https (plain http only to a loopback address, for tests)';
}

export interface ScanningSettings {
  readonly keysUrl: string;
  readonly action: ScanningAction;
  readonly keyPrefix: string;
  /** Where notices of a leak go; absent: the log line alone records it. */
  readonly alarmTopicArn?: string;
  readonly registry: RegistryLayout;
  readonly logLevel: LogLevel;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Reads the environment the stack sets; a bad value fails the function's start with one line naming it. */
export function readScanningSettings(env: Environment): ScanningSettings {
  const keysUrl = env[SCANNING_ENV.keysUrl] || DEFAULT_KEYS_URL;
  const urlProblem = keysUrlProblem(keysUrl);
  if (urlProblem !== undefined) throw new Error(`${SCANNING_ENV.keysUrl} ${urlProblem}`);
  const rawAction = env[SCANNING_ENV.action] || DEFAULT_SCANNING_ACTION;
  const action = SCANNING_ACTIONS.find((candidate) => candidate === rawAction);
  if (action === undefined) {
    throw new Error(`${SCANNING_ENV.action} must be one of ${SCANNING_ACTIONS.join(', ')}`);
  }
  const keyPrefix = env[SCANNING_ENV.keyPrefix] || DEFAULT_KEY_PREFIX;
  if (!isKeyPrefix(keyPrefix)) throw new Error(`${SCANNING_ENV.keyPrefix} must be ${KEY_PREFIX_RULE}`);
  const alarmTopicArn = env[SCANNING_ENV.alarmTopicArn] || undefined;
  return {
    keysUrl,
    action,
    keyPrefix,
    ...(alarmTopicArn === undefined ? {} : { alarmTopicArn }),
    registry: readRegistryLayout(env),
    logLevel: parseLogLevel(env[SCANNING_ENV.logLevel], SCANNING_ENV.logLevel),
  };
}
