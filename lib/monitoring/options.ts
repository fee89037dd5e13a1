import { Duration } from 'aws-cdk-lib';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { DEFAULT_METRICS_NAMESPACE } from '../../lambda/payment/metric-names';
import {
  requireFormat,
  requireInOpenInterval,
  requireWholeDuration,
  requireWholeNumber,
  type DurationRange,
  type OpenInterval,
  type TextFormat,
  type WholeNumberRange,
} from '../validation';

/** What operators tune: where the metrics go, where alarms are sent, and the alarm thresholds. */
export interface MonitoringOptions {
  /**
   * CloudWatch namespace of the metrics the Lambda emits: 1 to 255 letters, digits or `. _ - / # :`, not
   * starting with `AWS/`.
   * @default 'PaymentApi'
   */
  readonly metricsNamespace?: string;

  /**
   * 401 answers in 5 minutes that raise the `UnauthorizedRequests` alarm (possible key guessing, or a client
   * still using a revoked key). A whole number from 1 to 1,000,000.
   * @default 100
   */
  readonly unauthorizedAlarmThreshold?: number;

  /**
   * API Gateway p99 latency that, exceeded in 5 consecutive minutes, raises the `ApiLatencyP99` alarm. Whole
   * milliseconds from 1 to 29,000 (API Gateway's integration time-out).
   * @default Duration.seconds(1)
   */
  readonly latencyAlarmThreshold?: Duration;

  /**
   * Percentage of requests answered 5XX that, exceeded in 3 of 5 minutes, raises the `ApiServerErrors` alarm.
   * Greater than 0 and less than 100.
   * @default 1
   */
  readonly serverErrorRateAlarmThreshold?: number;

  /**
   * Creates an encrypted SNS topic for alarm and recovery notices, with this address subscribed (it must confirm
   * the subscription from the email AWS sends). Give this or `alarmTopic`, not both.
   * @default - no topic is created
   */
  readonly alarmEmail?: string;

  /**
   * An existing SNS topic for alarm and recovery notices. It must let `cloudwatch.amazonaws.com` publish, and
   * if it is encrypted, its KMS key must let CloudWatch use it. Give this or `alarmEmail`, not both.
   * @default - no topic: the alarms exist without actions
   */
  readonly alarmTopic?: sns.ITopic;
}

export const MONITORING_DEFAULTS = {
  metricsNamespace: DEFAULT_METRICS_NAMESPACE,
  unauthorizedAlarmThreshold: 100,
  latencyAlarmThreshold: Duration.seconds(1),
  serverErrorRateAlarmThreshold: 1,
} as const satisfies Partial<Record<keyof MonitoringOptions, unknown>>;

export const MONITORING_LIMITS = {
  unauthorizedAlarmThreshold: {
    min: 1,
    max: 1_000_000,
    unit: '401 answers in 5 minutes',
  } satisfies WholeNumberRange,
  latencyAlarmThreshold: { min: 1, max: 29_000, unit: 'milliseconds' } satisfies DurationRange,
  serverErrorRateAlarmThreshold: { above: 0, below: 100, noun: 'percentage' } satisfies OpenInterval,
} as const;

/** CloudWatch's namespace characters, less the space (it would need quoting in every query and CLI call). */
export const METRICS_NAMESPACE: TextFormat = {
  pattern: /^(?!AWS\/)[A-Za-z0-9._/#:-]{1,255}$/,
  description: '1 to 255 letters, digits or . _ - / # : and not start with "AWS/"',
};

/** A shape check only: SNS sends a confirmation message, which is the real test of the address. */
export const ALARM_EMAIL: TextFormat = {
  pattern: /^(?=.{1,254}$)[^\s@]{1,64}@[^\s@.]+(\.[^\s@.]+)+$/,
  description: 'one email address (name@example.com)',
};

/**
 * Throws on the first invalid option, naming it as `<prefix><option>` (the construct's props are `monitoring.…`
 * inside PaymentApi). Values that are tokens are left to CloudFormation.
 */
export function validateMonitoringOptions(options: MonitoringOptions, prefix = ''): void {
  const L = MONITORING_LIMITS;
  if (options.metricsNamespace !== undefined) {
    requireFormat(`${prefix}metricsNamespace`, METRICS_NAMESPACE, options.metricsNamespace);
  }
  if (options.unauthorizedAlarmThreshold !== undefined) {
    requireWholeNumber(
      `${prefix}unauthorizedAlarmThreshold`,
      L.unauthorizedAlarmThreshold,
      options.unauthorizedAlarmThreshold,
    );
  }
  if (options.latencyAlarmThreshold !== undefined) {
    requireWholeDuration(
      `${prefix}latencyAlarmThreshold`,
      L.latencyAlarmThreshold,
      options.latencyAlarmThreshold,
    );
  }
  if (options.serverErrorRateAlarmThreshold !== undefined) {
    requireInOpenInterval(
      `${prefix}serverErrorRateAlarmThreshold`,
      L.serverErrorRateAlarmThreshold,
      options.serverErrorRateAlarmThreshold,
    );
  }
  if (options.alarmEmail !== undefined) requireFormat(`${prefix}alarmEmail`, ALARM_EMAIL, options.alarmEmail);
  if (options.alarmEmail !== undefined && options.alarmTopic !== undefined) {
    throw new Error(
      `Give ${prefix}alarmEmail or ${prefix}alarmTopic, not both: subscribe the address to your topic to get notices from both`,
    );
  }
}
