import { MIN_KEYS_KEPT_BY_ROTATION } from '../../shared/keys/rotation';
import type { CallBounds } from '../../shared/aws/bounded-client';
import { parseLogLevel, type LogLevel } from '../../shared/logger';

/** Environment variable names, shared with the stack that sets them. The secret comes from each event. */
export const ROTATION_ENV = {
  keepKeys: 'ROTATION_KEEP_KEYS',
  logLevel: 'LOG_LEVEL',
} as const;

/** The fresh key and the one before it: clients get one full period to pick up the new key. */
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
  /** How many newest keys each app keeps after a rotation (the fresh one included). */
  readonly keep: number;
  readonly logLevel: LogLevel;
}

type Environment = Readonly<Record<string, string | undefined>>;

/** Absent or empty means the default; anything but a whole number of at least 2 is a configuration error. */
export function readRotationSettings(env: Environment): RotationSettings {
  const raw = env[ROTATION_ENV.keepKeys];
  let keep = DEFAULT_ROTATION_KEEP_KEYS;
  if (raw !== undefined && raw !== '') {
    if (!/^\d+$/.test(raw) || Number(raw) < MIN_KEYS_KEPT_BY_ROTATION) {
      throw new Error(
        `${ROTATION_ENV.keepKeys} must be a whole number of at least ${MIN_KEYS_KEPT_BY_ROTATION}, got "${raw}"`,
      );
    }
    keep = Number(raw);
  }
  return { keep, logLevel: parseLogLevel(env[ROTATION_ENV.logLevel], ROTATION_ENV.logLevel) };
}
