import {
  burstProblem,
  defaultBurst,
  perSecondProblem,
  type RateLimit,
} from '../../../shared/keys/rate-limit';
import type { EnvironmentVariables } from '../../../shared/aws/aws-environment';
import { LIMITER_WORST_ADDED_MS, type LimiterFailure } from './limiter';

export type { LimiterFailure } from './limiter';

export const LIMITER_FAILURES: readonly LimiterFailure[] = ['local', 'open', 'closed'];

/**
 * The failure mode unless configured: `local`. It never refuses a request `open` would let through for an app
 * within its limit (an app under its limit in all is under it in each environment), and it never turns "limited"
 * into "unlimited" when a flood meets a slow store: an app then gets at most environments × its limit.
 */
export const DEFAULT_LIMITER_FAILURE: LimiterFailure = 'local';

/** Environment variables of the rate-limited payment Lambda, shared with the stack that sets them. */
export const RATE_LIMIT_ENV = {
  table: 'RATE_LIMIT_TABLE',
  perSecond: 'RATE_LIMIT_PER_SECOND',
  burst: 'RATE_LIMIT_BURST',
  failure: 'RATE_LIMIT_FAILURE',
  /**
   * The check's time budget. Never set by the stack: tests against an emulator give the limiter more time than
   * production allows, explicitly.
   */
  budgetMs: 'RATE_LIMIT_DEADLINE_MS',
} as const;

/** The check budgets RATE_LIMIT_DEADLINE_MS may set (the local server reads the same variable). */
export const RATE_LIMIT_BUDGET_LIMITS = { min: 10, max: 60_000 } as const;

export interface RateLimitSettings {
  readonly tableName: string;
  /** Every app's limit, unless the secret gives it one of its own. */
  readonly defaultLimit: RateLimit;
  readonly failure: LimiterFailure;
  /** The check's time budget (LIMITER_WORST_ADDED_MS unless set explicitly). */
  readonly budgetMs: number;
}

/** A number as an environment variable holds it: digits, optionally a fraction (as String(1 / 3) writes it); NaN otherwise. */
function numberIn(raw: string): number {
  return /^\d{1,9}(\.\d{1,20})?$/.test(raw) ? Number(raw) : NaN;
}

/**
 * A default limit from two variables (the Lambda's RATE_LIMIT_*, the local server's APP_RATE_*): undefined when the
 * rate is absent or empty. A bad value is a configuration error, one line naming the variable.
 */
export function readDefaultLimit(
  env: EnvironmentVariables,
  perSecondName: string,
  burstName: string,
): RateLimit | undefined {
  const rawRate = env[perSecondName];
  if (rawRate === undefined || rawRate === '') {
    const rawBurst = env[burstName];
    if (rawBurst !== undefined && rawBurst !== '') throw new Error(`${burstName} needs ${perSecondName}`);
    return undefined;
  }
  const perSecond = numberIn(rawRate);
  const rateProblem = perSecondProblem(perSecond);
  if (rateProblem !== undefined) throw new Error(`${perSecondName} ${rateProblem}, got "${rawRate}"`);
  const rawBurst = env[burstName];
  if (rawBurst === undefined || rawBurst === '') return { perSecond, burst: defaultBurst(perSecond) };
  const burst = numberIn(rawBurst);
  const problem = burstProblem(burst);
  if (problem !== undefined) throw new Error(`${burstName} ${problem}, got "${rawBurst}"`);
  return { perSecond, burst };
}

/**
 * The failure mode from one variable (the Lambda's RATE_LIMIT_FAILURE, the local server's APP_RATE_LIMIT_FAILURE):
 * DEFAULT_LIMITER_FAILURE when absent or empty. Anything else is a configuration error, one line naming the
 * variable.
 */
export function readLimiterFailure(env: EnvironmentVariables, name: string): LimiterFailure {
  const raw = env[name];
  const failure = LIMITER_FAILURES.find((candidate) => candidate === (raw || DEFAULT_LIMITER_FAILURE));
  if (failure === undefined) {
    throw new Error(`${name} must be one of ${LIMITER_FAILURES.join(', ')}, got "${raw ?? ''}"`);
  }
  return failure;
}

/** What the rate-limited entry needs; throws (failing the Lambda's init) when something is missing or invalid. */
export function readRateLimitSettings(env: EnvironmentVariables): RateLimitSettings {
  const tableName = env[RATE_LIMIT_ENV.table];
  if (tableName === undefined || tableName === '') {
    throw new Error(`${RATE_LIMIT_ENV.table} must name the rate limit table`);
  }
  const defaultLimit = readDefaultLimit(env, RATE_LIMIT_ENV.perSecond, RATE_LIMIT_ENV.burst);
  if (defaultLimit === undefined) throw new Error(`${RATE_LIMIT_ENV.perSecond} must be set`);
  const failure = readLimiterFailure(env, RATE_LIMIT_ENV.failure);
  const rawBudget = env[RATE_LIMIT_ENV.budgetMs];
  const budgetMs = rawBudget === undefined || rawBudget === '' ? LIMITER_WORST_ADDED_MS : numberIn(rawBudget);
  const { min, max } = RATE_LIMIT_BUDGET_LIMITS;
  if (!(Number.isInteger(budgetMs) && budgetMs >= min && budgetMs <= max)) {
    throw new Error(
      `${RATE_LIMIT_ENV.budgetMs} must be a whole number of milliseconds from ${min} to ${max}`,
    );
  }
  return { tableName, defaultLimit, failure, budgetMs };
}
