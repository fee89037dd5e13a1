import { Duration } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import type { LimiterFailure } from '../../lambda/payment/rate-limit/settings';
import { DEFAULT_KEY_EXPIRY_WARNING_DAYS } from '../../lambda/payment/settings';
import { createAlarms, notifyTopic, type MonitoringAlarms, type RegistryMonitorHealth } from './alarms';
import { createAlarmTopic } from './alarm-topic';
import { createDashboard } from './dashboard';
import { MONITORING_DEFAULTS, validateMonitoringOptions, type MonitoringOptions } from './options';
import { createSavedQueries, type SavedQueries } from './saved-queries';
import { serviceMetrics, type ServiceMetric, type ServiceMetricName } from './service-metrics';

/** The per-app rate limiter, as on-call needs to see it. */
export interface RateLimiterMonitoring {
  /** What a request gets when the limiter cannot count it; the alarm tells on-call what callers saw. */
  readonly failure: LimiterFailure;
  /** The counters' table: its latency and throttled writes on the dashboard. */
  readonly table: dynamodb.ITable;
}

export interface MonitoringProps extends MonitoringOptions {
  /** The stage that serves POST /payment: its API Gateway metrics (dimensions ApiName and Stage). */
  readonly stage: apigateway.Stage;
  /** The payment Lambda: its metrics and its log group, which the saved queries read. */
  readonly handler: lambda.Function;
  /**
   * The rotation Lambda of scheduled key rotation: adds the `RotationFailing` alarm and a dashboard row.
   * @default - no rotation alarm
   */
  readonly rotationFunction?: lambda.IFunction;
  /**
   * The key registry monitor, which measures every shard each hour: its function (with its log group, which the
   * dashboard and the saved query "Key registry by shard" read) and its schedule's undelivered runs.
   */
  readonly registryMonitor: RegistryMonitorHealth & { readonly handler: lambda.Function };
  /**
   * The `Service` dimension of the custom metrics and the prefix of every alarm, dashboard and query name: the
   * stack name, so that environments in one account stay apart.
   */
  readonly serviceName: string;
  /**
   * How long before its expiry a key counts in `KeysExpiringSoon`: the payment Lambda's setting, which the alarm's
   * description states.
   * @default Duration.days(14)
   */
  readonly keyExpiryWarning?: Duration;
  /**
   * The per-app rate limiter, when the stack has one: adds the `RateLimiterUnavailable` alarm, a dashboard row and
   * the saved query "429s by app".
   * @default - no rate limiter
   */
  readonly rateLimiter?: RateLimiterMonitoring;
}

/**
 * What operators see of the payment API: alarms (with notices to an SNS topic when one is given), a dashboard
 * and saved Logs Insights queries, all named after the service so that environments in one account stay apart.
 * Each part is made in its own module, directly in this construct's scope.
 */
export class Monitoring extends Construct {
  public readonly alarms: MonitoringAlarms;
  public readonly dashboard: cloudwatch.Dashboard;
  /** Where alarm and recovery notices go: the topic created for `alarmEmail`, or `alarmTopic`. */
  public readonly topic?: sns.ITopic;
  public readonly queries: SavedQueries;
  /** The namespace of the Lambda's metrics. */
  public readonly metricsNamespace: string;

  private readonly serviceMetric: ServiceMetric;

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    validateMonitoringOptions(props);
    const { stage, handler, rotationFunction, registryMonitor, serviceName, rateLimiter } = props;
    this.metricsNamespace = props.metricsNamespace ?? MONITORING_DEFAULTS.metricsNamespace;
    this.serviceMetric = serviceMetrics(this.metricsNamespace, serviceName);

    this.alarms = createAlarms(this, {
      stage,
      handler,
      rotationFunction,
      registryMonitor,
      metric: this.serviceMetric,
      serviceName,
      unauthorizedThreshold:
        props.unauthorizedAlarmThreshold ?? MONITORING_DEFAULTS.unauthorizedAlarmThreshold,
      latencyThresholdMs: (
        props.latencyAlarmThreshold ?? MONITORING_DEFAULTS.latencyAlarmThreshold
      ).toMilliseconds(),
      serverErrorRateThreshold:
        props.serverErrorRateAlarmThreshold ?? MONITORING_DEFAULTS.serverErrorRateAlarmThreshold,
      keyExpiryWarningDays: (
        props.keyExpiryWarning ?? Duration.days(DEFAULT_KEY_EXPIRY_WARNING_DAYS)
      ).toDays(),
      rateLimiterFailure: rateLimiter?.failure,
    });
    this.topic =
      props.alarmTopic ??
      (props.alarmEmail === undefined
        ? undefined
        : createAlarmTopic(this, { email: props.alarmEmail, serviceName }));
    if (this.topic) notifyTopic(this.alarms, this.topic);
    this.dashboard = createDashboard(this, {
      stage,
      handler,
      rotationFunction,
      registryMonitor: { ...registryMonitor, logGroup: registryMonitor.handler.logGroup },
      alarms: this.alarms,
      metric: this.serviceMetric,
      metricsNamespace: this.metricsNamespace,
      serviceName,
      rateLimitTable: rateLimiter?.table,
    });
    this.queries = createSavedQueries(this, {
      logGroup: handler.logGroup,
      monitorLogGroup: registryMonitor.handler.logGroup,
      serviceName,
      rateLimited: rateLimiter !== undefined,
    });
  }

  /**
   * One of the service's metrics (the payment Lambda's, or the key registry monitor's), summed per minute unless
   * `options` says otherwise: the base for alarms of your own.
   */
  public metric(name: ServiceMetricName, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return this.serviceMetric(name, options);
  }
}
