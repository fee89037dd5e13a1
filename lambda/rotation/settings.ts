import { MAX_KEYS_KEPT_BY_ROTATION, MIN_KEYS_KEPT_BY_ROTATION } from '../../shared/keys/rotation';
import type { CallBounds } from '../../shared/aws/bounded-client';
import { readKeyPrefix } from '../../shared/keys/key-format';
import { parseLogLevel, type LogLevel } from '../../shared/logger';

/** Environment variable names, shared with the stack that sets them. The secret comes from each event. */
export const ROTATION_ENV = {
  keepKeys: 'ROTATION_KEEP_KEYS',
  periodHours: 'ROTATION_PERIOD_HOURS',
  logLevel: 'LOG_LEVEL',
  /** The stack's key prefix (context `keyPrefix`): fresh keys are `<prefix>_<32 base62><6 base62 CRC32>`. */
  keyPrefix: 'KEY_PREFIX',
} as const;

const HOUR_MS = 3_600_000;

/** Secrets Manager's longest rotation period, 1000 days. */
const MAX_PERIOD_HOURS = 24_000;

/** The fresh key and the one before it: the previous key stays valid one full period after the fresh key arrives. */
export const DEFAULT_ROTATION_KEEP_KEYS = MIN_KEYS_KEPT_BY_ROTATION;

/**
 * Bounds on each Secrets Manager call of a rotation step. Nobody waits on an HTTP answer here, so attempts may
 * take longer than the payment Lambda's; one call ends within 3 × 2 s + back-off, and never after 8 s. A step makes
 * at most 5 calls: 40 s, inside the function's 60 s time-out (lib/key-rotation.ts).
 */
export const ROTATION_CALL_BOUNDS: CallBounds = {
  maxAttempts: 3,
  connectionTimeoutMs: 1_000,
  attemptTimeoutMs: 2_000,
  callDeadlineMs: 8_000,
};

/** The most Secrets Manager calls one rotation step makes (finishSecret: describe, 2 reads, 2 stage moves). */
export const MAX_CALLS_PER_ROTATION_STEP = 5;

export interface RotationSettings {
  /** Keys valid right after a rotation, the fresh one included: a superseded key lives keep - 1 more periods. */
  readonly keep: number;
  /** Time between two scheduled rotations, in milliseconds: what a superseded key's expiry is counted in. */
  readonly periodMs: number;
  readonly logLevel: LogLevel;
  /** The prefix of the keys it generates. */
  readonly keyPrefix: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

function wholeNumberIn(env: Environment, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new Error(`${name} must be a whole number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/**
 * ROTATION_KEEP_KEYS: absent or empty means the default. ROTATION_PERIOD_HOURS has no default: the stack always sets
 * it to the schedule's period, and a guess would give superseded keys the wrong expiry. Anything else out of range
 * is a configuration error, which fails the function's start.
 */
export function readRotationSettings(env: Environment): RotationSettings {
  const keep =
    wholeNumberIn(env, ROTATION_ENV.keepKeys, MIN_KEYS_KEPT_BY_ROTATION, MAX_KEYS_KEPT_BY_ROTATION) ??
    DEFAULT_ROTATION_KEEP_KEYS;
  const periodHours = wholeNumberIn(env, ROTATION_ENV.periodHours, 1, MAX_PERIOD_HOURS);
  if (periodHours === undefined) {
    throw new Error(`${ROTATION_ENV.periodHours} must be set to the hours between two rotations`);
  }
  return {
    keep,
    periodMs: periodHours * HOUR_MS,
    logLevel: parseLogLevel(env[ROTATION_ENV.logLevel], ROTATION_ENV.logLevel),
    keyPrefix: readKeyPrefix(env[ROTATION_ENV.keyPrefix], ROTATION_ENV.keyPrefix),
  };
}
