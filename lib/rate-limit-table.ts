import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import { COUNTER_TABLE } from '../lambda/payment/rate-limit/counter-table';
import {
  DEFAULT_LIMITER_FAILURE,
  LIMITER_FAILURES,
  type LimiterFailure,
} from '../lambda/payment/rate-limit/settings';
import { burstProblem, defaultBurst, perSecondProblem, type RateLimit } from '../shared/keys/rate-limit';
import { requireNoProblem, requireOneOf } from './validation';

export type { LimiterFailure } from '../lambda/payment/rate-limit/settings';

/**
 * Per-app rate limits: every app gets `perSecond` (an app object in the secret may carry a `rateLimit` of its own,
 * which wins), counted in a DynamoDB table that every execution environment of the payment Lambda shares.
 */
export interface AppRateLimitOptions {
  /** Requests per second each app may make on average: 0.001 to 10000 (0.5 is one request every 2 s). */
  readonly perSecond: number;

  /**
   * Requests an app may make in each window of `burst / perSecond` seconds, at once if it likes: a whole number
   * from 1 to 100000.
   * @default - perSecond rounded up, at least 1 (one second's worth)
   */
  readonly burst?: number;

  /**
   * What a request gets when the limiter cannot ask DynamoDB in time (slow, throttling, refusing, its breaker open):
   * `local` counts it in the execution environment's memory against the app's limit (the same window and burst, so
   * an app gets at most environments × its limit), `open` lets it through uncounted, `closed` answers 503. Every
   * such request counts in `RateLimiterUnavailable`.
   * @default 'local'
   */
  readonly failure?: LimiterFailure;
}

export const APP_RATE_LIMIT_DEFAULTS = {
  failure: DEFAULT_LIMITER_FAILURE,
} as const satisfies Partial<Record<keyof AppRateLimitOptions, unknown>>;

/** The limit every app gets unless the secret gives it its own, and what the limiter does when it cannot count. */
export interface ResolvedAppRateLimit {
  readonly defaultLimit: RateLimit;
  readonly failure: LimiterFailure;
}

/**
 * Throws on the first invalid option, in the words the secret's `rateLimit` and the Lambda's settings use, naming
 * it `<prefix><option>` (`appRateLimit.perSecond` on the construct).
 */
export function validateAppRateLimitOptions(options: AppRateLimitOptions, prefix = 'appRateLimit.'): void {
  requireNoProblem(`${prefix}perSecond`, perSecondProblem, options.perSecond);
  if (options.burst !== undefined) requireNoProblem(`${prefix}burst`, burstProblem, options.burst);
  if (options.failure !== undefined) requireOneOf(`${prefix}failure`, LIMITER_FAILURES, options.failure);
}

export function resolveAppRateLimit(options: AppRateLimitOptions): ResolvedAppRateLimit {
  return {
    defaultLimit: {
      perSecond: options.perSecond,
      burst: options.burst ?? defaultBurst(options.perSecond),
    },
    failure: options.failure ?? APP_RATE_LIMIT_DEFAULTS.failure,
  };
}

/** The one call the limiter makes: a conditional update of one counter item. */
export const RATE_LIMIT_TABLE_ACTIONS = ['dynamodb:UpdateItem'] as const;

/**
 * The DynamoDB table of the per-app rate limiter, created in `scope` as `<id>` (the table is `<id>/Table`). Its
 * name is CloudFormation's, unique per stack, so environments side by side never share counters.
 *
 * Everything in it is disposable: a counter (lambda/payment/rate-limit/counter-table.ts) is worth nothing once its
 * window has ended, and an item lost only lets that app start its window again. Hence on-demand billing (traffic
 * follows the payments, with no capacity to plan), a TTL that removes ended windows' items, no point-in-time
 * recovery, removal with the stack, and the AWS owned key: the items hold app ids and counts, nothing secret, and a
 * customer key would cost a KMS call per cache miss and a monthly fee for no protection that matters here.
 */
export class RateLimitTable extends Construct {
  public readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: { name: COUNTER_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: COUNTER_TABLE.expiresAt,
      encryption: dynamodb.TableEncryption.DEFAULT,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: false },
      removalPolicy: RemovalPolicy.DESTROY,
    });
    NagSuppressions.addResourceSuppressions(this.table, [
      {
        id: 'AwsSolutions-DDB3',
        reason:
          'Rate limit counters only: a counter is worthless a few seconds after its last request, and restoring ' +
          'an old one would only refuse requests wrongly. Nothing in the table needs recovering.',
      },
    ]);
  }

  /**
   * Lets `grantee` move the counters: `dynamodb:UpdateItem` on this table only (the table has no index, and the
   * limiter never reads, scans or deletes).
   */
  public grantCounterUpdates(grantee: iam.IGrantable): iam.Grant {
    return iam.Grant.addToPrincipal({
      grantee,
      actions: [...RATE_LIMIT_TABLE_ACTIONS],
      resourceArns: [this.table.tableArn],
    });
  }
}
