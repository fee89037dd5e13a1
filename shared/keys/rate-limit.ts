/**
 * An app's rate limit, as the secret's app object may carry it (`"rateLimit": {"perSecond": 20, "burst": 40}`), the
 * stack's default has it (`appRateLimit`, `appRateBurst`), and the limiter applies it.
 */
export interface RateLimit {
  /** Requests per second, on average: a positive number (fractions allowed: 0.5 is one request every 2 s). */
  readonly perSecond: number;
  /** Requests accepted at once, and in each window of `burst / perSecond` seconds: a whole number, at least 1. */
  readonly burst: number;
}

export const RATE_LIMIT_LIMITS = {
  perSecond: { min: 0.001, max: 10_000 },
  burst: { min: 1, max: 100_000 },
} as const;

export const RATE_LIMIT_FIELDS = ['perSecond', 'burst'] as const;

/** Without a burst of its own, a limit lets one second's worth of requests come at once (at least one). */
export function defaultBurst(perSecond: number): number {
  return Math.max(1, Math.ceil(perSecond));
}

const PER_SECOND_RULE = `a number of requests per second from ${RATE_LIMIT_LIMITS.perSecond.min} to ${RATE_LIMIT_LIMITS.perSecond.max}`;
const BURST_RULE = `a whole number of requests from ${RATE_LIMIT_LIMITS.burst.min} to ${RATE_LIMIT_LIMITS.burst.max}`;

/** Why a requests-per-second value is refused, phrased to follow its name; undefined when it is valid. */
export function perSecondProblem(value: number): string | undefined {
  const { min, max } = RATE_LIMIT_LIMITS.perSecond;
  return Number.isFinite(value) && value >= min && value <= max ? undefined : `must be ${PER_SECOND_RULE}`;
}

/** Why a burst is refused, phrased to follow its name; undefined when it is valid. */
export function burstProblem(value: number): string | undefined {
  const { min, max } = RATE_LIMIT_LIMITS.burst;
  return Number.isInteger(value) && value >= min && value <= max ? undefined : `must be ${BURST_RULE}`;
}

export type RateLimitReading =
  | {
      readonly ok: true;
      readonly limit: RateLimit;
      /** As written: a burst left out is not written back. */
      readonly written: { readonly perSecond: number; readonly burst?: number };
    }
  | { readonly ok: false; readonly reason: string };

/** The `rateLimit` of an app object; strict, like the rest of the format: an unknown field refuses it. */
export function readRateLimit(value: unknown): RateLimitReading {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      ok: false,
      reason: '"rateLimit" must be an object: {"perSecond": <number>, "burst": <whole number>}',
    };
  }
  const fields = value as Readonly<Record<string, unknown>>;
  const unknownField = Object.keys(fields).findIndex(
    (field) => !(RATE_LIMIT_FIELDS as readonly string[]).includes(field),
  );
  if (unknownField !== -1) {
    return { ok: false, reason: `"rateLimit" field #${unknownField + 1} is not one of "perSecond", "burst"` };
  }
  const perSecond = fields.perSecond;
  if (typeof perSecond !== 'number' || perSecondProblem(perSecond) !== undefined) {
    return { ok: false, reason: `"rateLimit"."perSecond" must be ${PER_SECOND_RULE}` };
  }
  if (!Object.hasOwn(fields, 'burst')) {
    return { ok: true, limit: { perSecond, burst: defaultBurst(perSecond) }, written: { perSecond } };
  }
  const burst = fields.burst;
  if (typeof burst !== 'number' || burstProblem(burst) !== undefined) {
    return { ok: false, reason: `"rateLimit"."burst" must be ${BURST_RULE}` };
  }
  return { ok: true, limit: { perSecond, burst }, written: { perSecond, burst } };
}
