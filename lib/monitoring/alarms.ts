import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { METRIC } from '../../lambda/payment/metric-names';
import { LIMITER_WORST_ADDED_MS } from '../../lambda/payment/rate-limit/limiter';
import { REGISTRY_METRIC } from '../../lambda/registry-monitor/metric-names';
import type { LimiterFailure } from '../../lambda/payment/rate-limit/settings';
import { SECRET_MAX_BYTES, SECRET_WARNING_FILL_PERCENT } from '../../shared/keys/secret-size';
import { SAVED_QUERIES } from './saved-queries';
import { FIVE_MINUTES, ONE_HOUR, ONE_MINUTE, type ServiceMetric } from './service-metrics';

/** The alarms every deployment has, by the last part of their names (`<serviceName>-<Name>`). */
export type ServiceAlarm =
  | 'ApiServerErrors'
  | 'ApiLatencyP99'
  | 'LambdaErrors'
  | 'LambdaThrottles'
  | 'KeysUnavailable'
  | 'KeyRefreshFailing'
  | 'UnauthorizedRequests'
  | 'KeysExpiringSoon'
  | 'SecretNearlyFull'
  | 'KeyShardsUnreadable'
  | 'KeyMonitorFailing';

/**
 * Every alarm: `RotationFailing` exists only with scheduled rotation, `RateLimiterUnavailable` only with per-app
 * rate limits.
 */
export type PaymentApiAlarm = ServiceAlarm | 'RotationFailing' | 'RateLimiterUnavailable';

export type MonitoringAlarms = Readonly<Record<ServiceAlarm, cloudwatch.Alarm>> & {
  readonly RotationFailing?: cloudwatch.Alarm;
  readonly RateLimiterUnavailable?: cloudwatch.Alarm;
};

export interface AlarmsProps {
  /** The stage that serves POST /payment. */
  readonly stage: apigateway.Stage;
  /** The payment Lambda. */
  readonly handler: lambda.IFunction;
  /** The rotation Lambda, when the secret is rotated on a schedule. */
  readonly rotationFunction?: lambda.IFunction;
  /** The key registry monitor, which measures every shard each hour. */
  readonly registryMonitor: RegistryMonitorHealth;
  /** The service's own metrics (the payment Lambda's and the monitor's). */
  readonly metric: ServiceMetric;
  /** Prefix of every alarm name. */
  readonly serviceName: string;
  readonly unauthorizedThreshold: number;
  readonly latencyThresholdMs: number;
  /** In percent. */
  readonly serverErrorRateThreshold: number;
  /** How long before its expiry a key counts in KeysExpiringSoon (the Lambda's setting), in whole days. */
  readonly keyExpiryWarningDays: number;
  /** What the per-app rate limiter does when it cannot count, when the stack has one. */
  readonly rateLimiterFailure?: LimiterFailure;
}

/** How on-call sees that the key registry monitor runs: its function's errors, and the runs its schedule missed. */
export interface RegistryMonitorHealth {
  readonly handler: lambda.IFunction;
  /** AWS/Events FailedInvocations of its schedule. */
  readonly failedInvocations: cloudwatch.Metric;
}

/**
 * Where on-call reads what to do: the section of docs/operations.md named after the alarm (GitHub makes the
 * heading's anchor lower case).
 */
export function runbookLink(alarm: PaymentApiAlarm): string {
  return `Runbook: docs/operations.md#${alarm.toLowerCase()}`;
}

interface AlarmSpec {
  readonly metric: cloudwatch.IMetric;
  readonly comparisonOperator: cloudwatch.ComparisonOperator;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  /** What happened and where to look; the runbook link is added after it. */
  readonly description: string;
  /**
   * A period without data: most alarms count events, where none means healthy.
   * @default cloudwatch.TreatMissingData.NOT_BREACHING
   */
  readonly missingData?: cloudwatch.TreatMissingData;
}

const { GREATER_THAN_THRESHOLD: ABOVE, GREATER_THAN_OR_EQUAL_TO_THRESHOLD: AT_LEAST } =
  cloudwatch.ComparisonOperator;
const SUM_PER_MINUTE = { statistic: cloudwatch.Stats.SUM, period: ONE_MINUTE };
/**
 * Levels the key registry monitor measures once an hour, over every shard, read as the highest sample of each
 * hour: one measurement per period, and a fix clears the alarm at the next run.
 */
const MAX_PER_HOUR = { statistic: cloudwatch.Stats.MAXIMUM, period: ONE_HOUR };
/**
 * An hour without a measurement (the monitor's run not yet due, or failed: KeyMonitorFailing says which) leaves a
 * level alarm as it was: neither raised nor cleared on no evidence.
 */
const HOURLY_LEVEL = { missingData: cloudwatch.TreatMissingData.IGNORE };
/**
 * "Any" alarms: one breaching minute raises them, five quiet minutes clear them, so an intermittent fault sends
 * one notice rather than one per minute.
 */
const ANY_IN_FIVE_MINUTES = {
  comparisonOperator: AT_LEAST,
  threshold: 1,
  evaluationPeriods: 5,
  datapointsToAlarm: 1,
};

function serviceAlarmSpecs(props: AlarmsProps): Record<ServiceAlarm, AlarmSpec> {
  const { stage, handler, metric } = props;
  const errorRate = props.serverErrorRateThreshold;
  const failureQuery = SAVED_QUERIES.keyFailureTimeline.name;
  const registryQuery = SAVED_QUERIES.registryByShard.name;
  return {
    ApiServerErrors: {
      // API Gateway's 5XXError averages to the share of requests answered 5XX.
      metric: stage.metricServerError({ statistic: cloudwatch.Stats.AVERAGE, period: ONE_MINUTE }),
      comparisonOperator: ABOVE,
      threshold: errorRate / 100,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      description:
        `More than ${errorRate}% of requests got a 5XX answer in 3 of the last 5 minutes: callers are failing. ` +
        'On the dashboard, "Requests by outcome" tells which: Unavailable (see KeysUnavailable), InternalError ' +
        '(Lambda logs, "unexpected error"), or neither (502/504 from API Gateway: see LambdaErrors and ' +
        'LambdaThrottles).',
    },
    ApiLatencyP99: {
      metric: stage.metricLatency({ statistic: cloudwatch.Stats.p(99), period: ONE_MINUTE }),
      comparisonOperator: ABOVE,
      threshold: props.latencyThresholdMs,
      evaluationPeriods: 5,
      datapointsToAlarm: 5,
      description:
        `The slowest 1% of requests took more than ${props.latencyThresholdMs} ms for 5 minutes in a row. ` +
        'Compare API latency with Lambda duration on the dashboard: slow Secrets Manager reads show as "keys ' +
        'loaded" lines with a large durationMs; many cold starts as ColdStart; a Lambda near its 10 s time-out ' +
        'as high duration.',
    },
    LambdaErrors: {
      metric: handler.metricErrors(SUM_PER_MINUTE),
      ...ANY_IN_FIVE_MINUTES,
      description:
        'The payment Lambda failed an invocation (time-out, crash, or failed start): API Gateway answered 502 ' +
        'or 504. The handler catches its own errors, so this is not a 401/503: read the Lambda log group for ' +
        '"Task timed out", "Runtime exited" or an init error, and roll back the last deploy if it started then.',
    },
    LambdaThrottles: {
      metric: handler.metricThrottles(SUM_PER_MINUTE),
      ...ANY_IN_FIVE_MINUTES,
      description:
        'Lambda refused to run the payment function: the account or Region concurrency limit is used up, so ' +
        'callers got errors. Check concurrency on the dashboard and other functions in the account; ask AWS ' +
        'for a higher limit, or reserve concurrency for this function.',
    },
    KeysUnavailable: {
      metric: metric(METRIC.unavailable, SUM_PER_MINUTE),
      ...ANY_IN_FIVE_MINUTES,
      description:
        'The API answered 503: the Lambda cannot read the keys from Secrets Manager and has no usable copy, so ' +
        `no caller can pay. Run the saved query "${failureQuery}" and read lastError: access denied or KMS ` +
        '(permissions, key policy), a malformed secret (fix the JSON), or a Secrets Manager outage (AWS ' +
        'Health Dashboard).' +
        (props.rateLimiterFailure === 'closed'
          ? ' With appRateLimitFailure=closed a 503 can also come from the rate limiter: if that query shows ' +
            'nothing, see RateLimiterUnavailable.'
          : ''),
    },
    KeyRefreshFailing: {
      metric: metric(METRIC.keyRefreshFailed, SUM_PER_MINUTE),
      comparisonOperator: AT_LEAST,
      threshold: 1,
      evaluationPeriods: 5,
      datapointsToAlarm: 3,
      description:
        'Reading the keys from Secrets Manager failed in 3 of the last 5 minutes: the Lambda is serving keys ' +
        'past their TTL (StaleKeysServed), so new and revoked keys do not take effect, and once keyMaxStale ' +
        `runs out it answers 503. Run the saved query "${failureQuery}" for the error and fix it as for ` +
        'KeysUnavailable.',
    },
    UnauthorizedRequests: {
      metric: metric(METRIC.unauthorized, { statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
      comparisonOperator: AT_LEAST,
      threshold: props.unauthorizedThreshold,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      description:
        `At least ${props.unauthorizedThreshold} requests in 5 minutes were refused with 401. Run the saved ` +
        `query "${SAVED_QUERIES.unauthorizedBySource.name}": many wrong_key or unknown_app from few addresses ` +
        'suggests key guessing (block them with a WAF rule); wrong_key from a known app suggests a client ' +
        'still using a revoked or rotated key (contact its owner).',
    },
    KeysExpiringSoon: {
      metric: metric(REGISTRY_METRIC.keysExpiringSoon, MAX_PER_HOUR),
      comparisonOperator: ABOVE,
      threshold: 0,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      ...HOURLY_LEVEL,
      description:
        `A partner is about to lose access: every key of at least one app expires within ${props.keyExpiryWarningDays} ` +
        'days, and from that instant its requests get 401 (expired_key). A key expiring beside one that lives on (a ' +
        'rotation in progress) does not count. The key registry monitor counts them in every shard each hour (the ' +
        `saved query "${registryQuery}" shows keysExpiringSoon by shard); npm run keys -- list shows each key's ` +
        'expiry; rotate <app-id> --grace <duration> gives the app a fresh key (hand it to the partner) and lets the old ' +
        'ones run out; expire <app-id> <key-id> --never if the expiry was a mistake. The alarm clears at the next ' +
        'hourly measurement once the app holds a key valid beyond the window, or its keys have expired.',
    },
    SecretNearlyFull: {
      metric: metric(REGISTRY_METRIC.secretFill, MAX_PER_HOUR),
      comparisonOperator: AT_LEAST,
      threshold: SECRET_WARNING_FILL_PERCENT,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      ...HOURLY_LEVEL,
      description:
        `A keys secret (a shard of the key registry: SecretFill is the fullest one's, and the saved query "${registryQuery}" ` +
        `names it) is at ${SECRET_WARNING_FILL_PERCENT}% or more of the ${SECRET_MAX_BYTES.toLocaleString('en-US')} ` +
        'bytes Secrets Manager allows. When it is full, the key CLI cannot add a key to it and scheduled rotation of ' +
        'it fails. Make room: npm run keys -- prune removes expired keys; revoke keys and apps no longer used (fewer ' +
        'keys per app); a sha256: digest takes more bytes than a plain key; or spread the apps over more shards ' +
        '(keyShards with keyShardsPrevious, then npm run keys -- reshard).',
    },
    KeyShardsUnreadable: {
      metric: metric(REGISTRY_METRIC.shardsUnreadable, MAX_PER_HOUR),
      comparisonOperator: AT_LEAST,
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      ...HOURLY_LEVEL,
      description:
        'The key registry monitor could not read at least one shard, or found a value that is not a keyring: the ' +
        'apps of that shard cannot authenticate (503 while no good copy is cached, then for good). Its log lines "key ' +
        `shard measured" with state unreadable or malformed name each shard and the error, never the value (saved ` +
        `query "${registryQuery}"): AccessDenied or a KMS error (the roles or the key policy), ResourceNotFound (a ` +
        'shard secret deleted or renamed: restore it, or redeploy), a value that does not parse (put back its ' +
        'previous version). The alarm clears at the next hourly measurement that reads every shard.',
    },
    KeyMonitorFailing: {
      metric: new cloudwatch.MathExpression({
        expression: 'FILL(errors, 0) + FILL(undelivered, 0)',
        usingMetrics: {
          errors: props.registryMonitor.handler.metricErrors({ statistic: cloudwatch.Stats.SUM }),
          undelivered: props.registryMonitor.failedInvocations,
        },
        period: ONE_HOUR,
        label: 'Monitor runs failed or not delivered',
      }),
      comparisonOperator: AT_LEAST,
      threshold: 1,
      evaluationPeriods: 1,
      datapointsToAlarm: 1,
      description:
        'The key registry monitor failed its hourly run, or its schedule could not invoke it: the shards are not ' +
        'being measured, so SecretNearlyFull, KeysExpiringSoon and KeyShardsUnreadable cannot go off and keep the ' +
        "state they had. Read the monitor function's log group for the error (Task timed out, Runtime exited, an " +
        'init error naming a setting) and its "key registry measured" lines; a schedule that cannot invoke it (a ' +
        'permission removed) is put right by a redeploy. The alarm clears after an hour with a good run.',
    },
  };
}

/** A failed step throws in the rotation function (after its "rotation step failed" log line), which Errors counts. */
function rotationAlarmSpec(rotationFunction: lambda.IFunction): AlarmSpec {
  return {
    metric: rotationFunction.metricErrors(SUM_PER_MINUTE),
    ...ANY_IN_FIVE_MINUTES,
    description:
      'Scheduled rotation of a keys shard failed: the rotation Lambda failed a step, so that shard got no fresh ' +
      'key. Its "rotation step failed" lines say which (secretArn: shard 0 is the output KeysSecretArn, shard i ' +
      'the secret .../keys/shard-i) and why: a malformed secret, an edit or a reshard during the rotation, a full ' +
      'secret ("the rotated secret would be N bytes": prune expired keys, revoke keys no longer used, or lower ' +
      'rotationKeep), or a permission. Fix the cause, then retry: aws secretsmanager rotate-secret --secret-id ' +
      '<secret ARN> --region <region>. If that is refused as an earlier rotation is unfinished, clear its ' +
      'AWSPENDING label (describe-secret shows the version): aws secretsmanager update-secret-version-stage ' +
      '--secret-id <secret ARN> --version-stage AWSPENDING --remove-from-version-id <version id> --region ' +
      '<region>. This alarm clears after 5 quiet minutes; the rotation stays failed until retried.',
  };
}

/**
 * Callers saw what the failure mode gives them: local counts in each environment, open lets the request through
 * uncounted, closed answers 503.
 */
const LIMITER_FAILURE_EFFECT: Readonly<Record<LimiterFailure, string>> = {
  local:
    'With appRateLimitFailure=local (this stack) each execution environment counted those requests itself, the ' +
    "app's limit in each: payments continue, and a flooding app got at most environments x its limit.",
  open:
    'With appRateLimitFailure=open (this stack) those requests went on uncounted: payments continue, but no ' +
    'app was limited for them.',
  closed:
    'With appRateLimitFailure=closed (this stack) those requests got 503: callers are failing (KeysUnavailable ' +
    'and ApiServerErrors may be raised too).',
};

/** Any request the limiter could not count in time; what callers saw depends on the failure mode. */
function rateLimiterAlarmSpec(metric: ServiceMetric, failure: LimiterFailure): AlarmSpec {
  return {
    metric: metric(METRIC.rateLimiterUnavailable, SUM_PER_MINUTE),
    ...ANY_IN_FIVE_MINUTES,
    description:
      `The per-app rate limiter could not count some requests in its DynamoDB table within ${LIMITER_WORST_ADDED_MS} ` +
      `ms, or did not ask it (an environment's breaker is open after failed calls). ` +
      `${LIMITER_FAILURE_EFFECT[failure]} Read the Lambda log lines "rate limiter unavailable" and their error: ` +
      "throttling (a whole table or partition: see the table's throttled writes on the dashboard), AccessDenied " +
      '(the role lost dynamodb:UpdateItem on the table: redeploy), ResourceNotFound (the table is gone: redeploy), ' +
      "or time-outs (the table's latency on the dashboard; AWS Health Dashboard). Nothing needs a restart: each " +
      'environment tries DynamoDB again within a second.',
  };
}

/** The alarms, created in `scope` as `<Name>Alarm` and named `<serviceName>-<Name>`. */
export function createAlarms(scope: Construct, props: AlarmsProps): MonitoringAlarms {
  const specs = serviceAlarmSpecs(props);
  const alarm = (name: PaymentApiAlarm, spec: AlarmSpec): cloudwatch.Alarm => {
    const { metric, description, missingData, ...options } = spec;
    return new cloudwatch.Alarm(scope, `${name}Alarm`, {
      metric,
      ...options,
      alarmName: `${props.serviceName}-${name}`,
      alarmDescription: `${description} ${runbookLink(name)}`,
      // No data means no requests (or no failures) in that period, which is healthy; the hourly levels say otherwise.
      treatMissingData: missingData ?? cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  };
  return {
    ApiServerErrors: alarm('ApiServerErrors', specs.ApiServerErrors),
    ApiLatencyP99: alarm('ApiLatencyP99', specs.ApiLatencyP99),
    LambdaErrors: alarm('LambdaErrors', specs.LambdaErrors),
    LambdaThrottles: alarm('LambdaThrottles', specs.LambdaThrottles),
    KeysUnavailable: alarm('KeysUnavailable', specs.KeysUnavailable),
    KeyRefreshFailing: alarm('KeyRefreshFailing', specs.KeyRefreshFailing),
    UnauthorizedRequests: alarm('UnauthorizedRequests', specs.UnauthorizedRequests),
    KeysExpiringSoon: alarm('KeysExpiringSoon', specs.KeysExpiringSoon),
    SecretNearlyFull: alarm('SecretNearlyFull', specs.SecretNearlyFull),
    KeyShardsUnreadable: alarm('KeyShardsUnreadable', specs.KeyShardsUnreadable),
    KeyMonitorFailing: alarm('KeyMonitorFailing', specs.KeyMonitorFailing),
    ...(props.rotationFunction && {
      RotationFailing: alarm('RotationFailing', rotationAlarmSpec(props.rotationFunction)),
    }),
    ...(props.rateLimiterFailure && {
      RateLimiterUnavailable: alarm(
        'RateLimiterUnavailable',
        rateLimiterAlarmSpec(props.metric, props.rateLimiterFailure),
      ),
    }),
  };
}

/** Alarm and recovery notices alike, so on-call learns when a problem ends as well as when it starts. */
export function notifyTopic(alarms: MonitoringAlarms, topic: sns.ITopic): void {
  const action = new actions.SnsAction(topic);
  for (const alarm of Object.values(alarms)) {
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
  }
}
