import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { requireFormat, type TextFormat } from './text-format';
import {
  DEFAULT_METRICS_NAMESPACE,
  METRIC,
  OUTCOME_METRICS,
  SERVICE_DIMENSION,
  type MetricName,
} from '../lambda/payment/metric-names';

/** What operators tune: where the metrics go, where alarms are sent, and the alarm thresholds. */
export interface PaymentApiMonitoringOptions {
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
} as const satisfies Partial<Record<keyof PaymentApiMonitoringOptions, unknown>>;

export const MONITORING_LIMITS = {
  unauthorizedAlarmThreshold: { min: 1, max: 1_000_000 },
  latencyAlarmThresholdMs: { min: 1, max: 29_000 },
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

/** Throws on the first invalid option. Values that are tokens are left to CloudFormation. */
export function validateMonitoringOptions(options: PaymentApiMonitoringOptions): void {
  if (options.metricsNamespace !== undefined) {
    requireFormat('metricsNamespace', METRICS_NAMESPACE, options.metricsNamespace);
  }
  const unauthorized = options.unauthorizedAlarmThreshold;
  const { min, max } = MONITORING_LIMITS.unauthorizedAlarmThreshold;
  if (
    unauthorized !== undefined &&
    !Token.isUnresolved(unauthorized) &&
    !(Number.isInteger(unauthorized) && unauthorized >= min && unauthorized <= max)
  ) {
    throw new Error(
      `unauthorizedAlarmThreshold must be a whole number of 401s per 5 minutes from ${min} to ${max}, got ${unauthorized}`,
    );
  }
  const latency = options.latencyAlarmThreshold;
  const latencyLimits = MONITORING_LIMITS.latencyAlarmThresholdMs;
  if (latency !== undefined && !latency.isUnresolved()) {
    const millis = latency.toMilliseconds();
    if (!(Number.isInteger(millis) && millis >= latencyLimits.min && millis <= latencyLimits.max)) {
      throw new Error(
        `latencyAlarmThreshold must be a whole number of milliseconds from ${latencyLimits.min} to ${latencyLimits.max}, got ${millis} ms`,
      );
    }
  }
  const rate = options.serverErrorRateAlarmThreshold;
  if (rate !== undefined && !Token.isUnresolved(rate) && !(Number.isFinite(rate) && rate > 0 && rate < 100)) {
    throw new Error(
      `serverErrorRateAlarmThreshold must be a percentage greater than 0 and less than 100, got ${rate}`,
    );
  }
  const email = options.alarmEmail;
  if (email !== undefined) requireFormat('alarmEmail', ALARM_EMAIL, email);
  if (email !== undefined && options.alarmTopic !== undefined) {
    throw new Error(
      'Give alarmEmail or alarmTopic, not both: subscribe the address to your topic to get notices from both',
    );
  }
}

/** Only the monitoring options of a larger props object, every one named so a new option cannot be missed. */
export function pickMonitoringOptions(props: PaymentApiMonitoringOptions): {
  readonly [K in keyof Required<PaymentApiMonitoringOptions>]: PaymentApiMonitoringOptions[K] | undefined;
} {
  return {
    metricsNamespace: props.metricsNamespace,
    unauthorizedAlarmThreshold: props.unauthorizedAlarmThreshold,
    latencyAlarmThreshold: props.latencyAlarmThreshold,
    serverErrorRateAlarmThreshold: props.serverErrorRateAlarmThreshold,
    alarmEmail: props.alarmEmail,
    alarmTopic: props.alarmTopic,
  };
}

export interface PaymentApiMonitoringProps extends PaymentApiMonitoringOptions {
  /** The stage that serves POST /payment: its API Gateway metrics (dimensions ApiName and Stage). */
  readonly stage: apigateway.Stage;
  /** The payment Lambda: its metrics and its log group, which the saved queries read. */
  readonly handler: lambda.Function;
  /**
   * The `Service` dimension of the custom metrics and the prefix of every alarm, dashboard and query name: the
   * stack name, so that environments in one account stay apart.
   */
  readonly serviceName: string;
}

/** The alarms, by the last part of their names (`<serviceName>-<Name>`). */
export type PaymentApiAlarm =
  | 'ApiServerErrors'
  | 'ApiLatencyP99'
  | 'LambdaErrors'
  | 'LambdaThrottles'
  | 'KeysUnavailable'
  | 'KeyRefreshFailing'
  | 'UnauthorizedRequests';

/** The saved Logs Insights queries. */
export type PaymentApiQuery = 'requestsByKey' | 'unauthorizedBySource' | 'keyFailureTimeline';

interface AlarmSpec {
  readonly metric: cloudwatch.Metric;
  readonly comparisonOperator: cloudwatch.ComparisonOperator;
  readonly threshold: number;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
  readonly description: string;
}

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);
const RUNBOOK = 'Runbook: README, "Operating it".';
const { GREATER_THAN_THRESHOLD: ABOVE, GREATER_THAN_OR_EQUAL_TO_THRESHOLD: AT_LEAST } =
  cloudwatch.ComparisonOperator;

interface SavedQuery {
  /** Construct id. */
  readonly id: string;
  /** Shown after `<serviceName>/`. */
  readonly name: string;
  readonly query: logs.QueryStringProps;
}

/** The saved queries: the name after `<serviceName>/`, and the query over the Lambda's JSON log lines. */
export const SAVED_QUERIES: Readonly<Record<PaymentApiQuery, SavedQuery>> = {
  requestsByKey: {
    id: 'RequestsByKeyQuery',
    name: 'Requests by app and key id',
    query: {
      filterStatements: ['message = "request accepted"'],
      statsStatements: ['count(*) as requests, latest(@timestamp) as lastSeen by appId, keyId'],
      sort: 'appId asc',
    },
  },
  unauthorizedBySource: {
    id: 'UnauthorizedBySourceQuery',
    name: '401s by reason and source IP',
    query: {
      filterStatements: ['message = "request refused" and status = 401'],
      statsStatements: ['count(*) as refusals, latest(@timestamp) as lastSeen by reason, sourceIp, appId'],
      sort: 'refusals desc',
    },
  },
  keyFailureTimeline: {
    id: 'KeyFailureTimelineQuery',
    name: '503s and key refresh failures per minute',
    query: {
      filterStatements: ['message = "keys unavailable" or message = "keys refresh failed"'],
      statsStatements: [
        'count(*) as events, max(staleKeysAgeSeconds) as maxStaleKeysAgeSeconds, latest(error) as lastError by bin(1m), message',
      ],
    },
  },
};

/**
 * What operators see of the payment API: alarms (with notices to an SNS topic when one is given), a dashboard
 * and saved Logs Insights queries, all named after the service so that environments in one account stay apart.
 */
export class PaymentApiMonitoring extends Construct {
  public readonly alarms: Readonly<Record<PaymentApiAlarm, cloudwatch.Alarm>>;
  public readonly dashboard: cloudwatch.Dashboard;
  /** Where alarm and recovery notices go: the topic created for `alarmEmail`, or `alarmTopic`. */
  public readonly topic?: sns.ITopic;
  public readonly queries: Readonly<Record<PaymentApiQuery, logs.QueryDefinition>>;
  /** The namespace of the Lambda's metrics. */
  public readonly metricsNamespace: string;

  private readonly serviceName: string;

  constructor(scope: Construct, id: string, props: PaymentApiMonitoringProps) {
    super(scope, id);
    validateMonitoringOptions(props);
    this.serviceName = props.serviceName;
    this.metricsNamespace = props.metricsNamespace ?? MONITORING_DEFAULTS.metricsNamespace;

    this.alarms = this.createAlarms(props);
    this.topic = props.alarmTopic ?? (props.alarmEmail ? this.createTopic(props.alarmEmail) : undefined);
    if (this.topic) this.notify(this.topic);
    this.dashboard = this.createDashboard(props);
    this.queries = this.createQueries(props.handler.logGroup);
  }

  /**
   * One of the Lambda's metrics for this service, summed per minute unless `options` says otherwise: the base
   * for alarms of your own.
   */
  public metric(name: MetricName, options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: this.metricsNamespace,
      metricName: name,
      dimensionsMap: { [SERVICE_DIMENSION]: this.serviceName },
      statistic: cloudwatch.Stats.SUM,
      period: ONE_MINUTE,
      ...options,
    });
  }

  private alarmSpecs(props: PaymentApiMonitoringProps): Record<PaymentApiAlarm, AlarmSpec> {
    const { stage, handler } = props;
    const unauthorized = props.unauthorizedAlarmThreshold ?? MONITORING_DEFAULTS.unauthorizedAlarmThreshold;
    const latencyMs = (
      props.latencyAlarmThreshold ?? MONITORING_DEFAULTS.latencyAlarmThreshold
    ).toMilliseconds();
    const errorRate =
      props.serverErrorRateAlarmThreshold ?? MONITORING_DEFAULTS.serverErrorRateAlarmThreshold;
    const sumPerMinute = { statistic: cloudwatch.Stats.SUM, period: ONE_MINUTE };
    const failureQuery = SAVED_QUERIES.keyFailureTimeline.name;
    // "Any" alarms: one breaching minute raises them, five quiet minutes clear them, so an intermittent fault
    // sends one notice rather than one per minute.
    const anyInFiveMinutes = {
      comparisonOperator: AT_LEAST,
      threshold: 1,
      evaluationPeriods: 5,
      datapointsToAlarm: 1,
    };
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
          `LambdaThrottles). ${RUNBOOK}`,
      },
      ApiLatencyP99: {
        metric: stage.metricLatency({ statistic: cloudwatch.Stats.p(99), period: ONE_MINUTE }),
        comparisonOperator: ABOVE,
        threshold: latencyMs,
        evaluationPeriods: 5,
        datapointsToAlarm: 5,
        description:
          `The slowest 1% of requests took more than ${latencyMs} ms for 5 minutes in a row. Compare API latency ` +
          'with Lambda duration on the dashboard: slow Secrets Manager reads show as "keys loaded" lines with a ' +
          'large durationMs; many cold starts as ColdStart; a Lambda near its 10 s time-out as high duration. ' +
          RUNBOOK,
      },
      LambdaErrors: {
        metric: handler.metricErrors(sumPerMinute),
        ...anyInFiveMinutes,
        description:
          'The payment Lambda failed an invocation (time-out, crash, or failed start): API Gateway answered 502 ' +
          'or 504. The handler catches its own errors, so this is not a 401/503: read the Lambda log group for ' +
          `"Task timed out", "Runtime exited" or an init error, and roll back the last deploy if it started then. ${RUNBOOK}`,
      },
      LambdaThrottles: {
        metric: handler.metricThrottles(sumPerMinute),
        ...anyInFiveMinutes,
        description:
          'Lambda refused to run the payment function: the account or Region concurrency limit is used up, so ' +
          'callers got errors. Check concurrency on the dashboard and other functions in the account; ask AWS ' +
          `for a higher limit, or reserve concurrency for this function. ${RUNBOOK}`,
      },
      KeysUnavailable: {
        metric: this.metric(METRIC.unavailable, sumPerMinute),
        ...anyInFiveMinutes,
        description:
          'The API answered 503: the Lambda cannot read the keys from Secrets Manager and has no usable copy, so ' +
          `no caller can pay. Run the saved query "${failureQuery}" and read lastError: access denied or KMS ` +
          '(permissions, key policy), a malformed secret (fix the JSON), or a Secrets Manager outage (AWS ' +
          `Health Dashboard). ${RUNBOOK}`,
      },
      KeyRefreshFailing: {
        metric: this.metric(METRIC.keyRefreshFailed, sumPerMinute),
        comparisonOperator: AT_LEAST,
        threshold: 1,
        evaluationPeriods: 5,
        datapointsToAlarm: 3,
        description:
          'Reading the keys from Secrets Manager failed in 3 of the last 5 minutes: the Lambda is serving keys ' +
          'past their TTL (StaleKeysServed), so new and revoked keys do not take effect, and once keyMaxStale ' +
          `runs out it answers 503. Run the saved query "${failureQuery}" for the error and fix it as for ` +
          `KeysUnavailable. ${RUNBOOK}`,
      },
      UnauthorizedRequests: {
        metric: this.metric(METRIC.unauthorized, { statistic: cloudwatch.Stats.SUM, period: FIVE_MINUTES }),
        comparisonOperator: AT_LEAST,
        threshold: unauthorized,
        evaluationPeriods: 1,
        datapointsToAlarm: 1,
        description:
          `At least ${unauthorized} requests in 5 minutes were refused with 401. Run the saved query ` +
          `"${SAVED_QUERIES.unauthorizedBySource.name}": many wrong_key or unknown_app from few addresses ` +
          'suggests key guessing (block them with a WAF rule); wrong_key from a known app suggests a client ' +
          `still using a revoked or rotated key (contact its owner). ${RUNBOOK}`,
      },
    };
  }

  private createAlarms(props: PaymentApiMonitoringProps): Record<PaymentApiAlarm, cloudwatch.Alarm> {
    const specs = this.alarmSpecs(props);
    const alarm = (name: PaymentApiAlarm): cloudwatch.Alarm => {
      const { metric, description, ...options } = specs[name];
      return metric.createAlarm(this, `${name}Alarm`, {
        ...options,
        alarmName: `${this.serviceName}-${name}`,
        alarmDescription: description,
        // No data means no requests (or no failures) in that minute, which is healthy.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
    };
    return {
      ApiServerErrors: alarm('ApiServerErrors'),
      ApiLatencyP99: alarm('ApiLatencyP99'),
      LambdaErrors: alarm('LambdaErrors'),
      LambdaThrottles: alarm('LambdaThrottles'),
      KeysUnavailable: alarm('KeysUnavailable'),
      KeyRefreshFailing: alarm('KeyRefreshFailing'),
      UnauthorizedRequests: alarm('UnauthorizedRequests'),
    };
  }

  /** Alarm and recovery notices alike, so on-call learns when a problem ends as well as when it starts. */
  private notify(topic: sns.ITopic): void {
    const action = new actions.SnsAction(topic);
    for (const alarm of Object.values(this.alarms)) {
      alarm.addAlarmAction(action);
      alarm.addOkAction(action);
    }
  }

  /**
   * Encrypted with a key of its own: CloudWatch cannot publish to a topic under the AWS managed `aws/sns` key,
   * whose policy cannot be changed. The topic policy replaces SNS's default one (which let the account publish),
   * so it must name CloudWatch alarms explicitly.
   */
  private createTopic(email: string): sns.Topic {
    const { partition, region, account } = Stack.of(this);
    const cloudWatch = new iam.ServicePrincipal('cloudwatch.amazonaws.com');

    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: `${this.serviceName} alarm notices: encrypts the alarm topic`,
      enableKeyRotation: true,
      // It only protects notices in flight: nothing stays encrypted under it once the stack is gone.
      removalPolicy: RemovalPolicy.DESTROY,
      pendingWindow: Duration.days(7),
    });
    // As the SNS guide's statement for AWS service publishers: CloudWatch makes the data key for each notice.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsEncryptNotices',
        principals: [cloudWatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );

    const topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisAccountPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
        },
      }),
    );
    topic.addSubscription(new subscriptions.EmailSubscription(email));
    return topic;
  }

  private createDashboard(props: PaymentApiMonitoringProps): cloudwatch.Dashboard {
    const { stage, handler } = props;
    const sum = { statistic: cloudwatch.Stats.SUM, period: ONE_MINUTE };
    const graph = (
      title: string,
      left: cloudwatch.IMetric[],
      extra: Partial<cloudwatch.GraphWidgetProps> = {},
    ): cloudwatch.GraphWidget =>
      new cloudwatch.GraphWidget({ title, left, width: 12, height: 6, leftYAxis: { min: 0 }, ...extra });
    const percentiles = (
      metricFor: (options: cloudwatch.MetricOptions) => cloudwatch.Metric,
      what: string,
    ): cloudwatch.Metric[] =>
      (['p50', 'p99'] as const).map((statistic) =>
        metricFor({ statistic, period: ONE_MINUTE, label: `${what} ${statistic}` }),
      );

    return new cloudwatch.Dashboard(this, 'Dashboard', {
      // Dashboards are global to the account (their ARNs have no Region): the Region keeps two deployments of
      // one stack name apart.
      dashboardName: `${this.serviceName}-${Stack.of(this).region}`,
      defaultInterval: Duration.hours(3),
      widgets: [
        [
          new cloudwatch.TextWidget({
            markdown:
              `# ${this.serviceName}: POST /payment\n` +
              `Metrics in namespace \`${this.metricsNamespace}\`, dimension \`${SERVICE_DIMENSION}=${this.serviceName}\`. ` +
              `Saved queries: Logs Insights, folder \`${this.serviceName}\`. Runbook: README, "Operating it".`,
            width: 24,
            height: 2,
          }),
        ],
        [
          new cloudwatch.AlarmStatusWidget({
            title: 'Alarm states',
            alarms: Object.values(this.alarms),
            width: 24,
            height: 3,
          }),
        ],
        [
          graph(
            'Requests by outcome (per minute)',
            OUTCOME_METRICS.map((name) => this.metric(name, { ...sum, label: name })),
            { stacked: true },
          ),
          graph('API requests, 4XX and 5XX (per minute)', [
            stage.metricCount({ ...sum, label: 'Requests' }),
            stage.metricClientError({ ...sum, label: '4XX' }),
            stage.metricServerError({ ...sum, label: '5XX' }),
          ]),
        ],
        [
          graph('Latency (ms)', [
            ...percentiles((options) => stage.metricLatency(options), 'API'),
            ...percentiles(
              (options) => stage.metricIntegrationLatency(options),
              'Lambda, as API Gateway sees it',
            ),
          ]),
          graph('Lambda duration (ms)', [
            ...percentiles((options) => handler.metricDuration(options), 'Duration'),
            handler.metricDuration({
              statistic: cloudwatch.Stats.MAXIMUM,
              period: ONE_MINUTE,
              label: 'Duration max',
            }),
          ]),
        ],
        [
          graph(
            'Lambda concurrency, throttles and errors',
            [
              handler.metric('ConcurrentExecutions', {
                statistic: cloudwatch.Stats.MAXIMUM,
                period: ONE_MINUTE,
                label: 'Concurrent executions (max)',
              }),
            ],
            {
              right: [
                handler.metricThrottles({ ...sum, label: 'Throttles' }),
                handler.metricErrors({ ...sum, label: 'Errors' }),
              ],
              rightYAxis: { min: 0 },
            },
          ),
          graph('Key refreshes and stale keys (per minute)', [
            this.metric(METRIC.keyRefreshSucceeded, { ...sum, label: METRIC.keyRefreshSucceeded }),
            this.metric(METRIC.keyRefreshFailed, { ...sum, label: METRIC.keyRefreshFailed }),
            this.metric(METRIC.staleKeysServed, { ...sum, label: METRIC.staleKeysServed }),
            this.metric(METRIC.coldStart, { ...sum, label: METRIC.coldStart }),
          ]),
        ],
      ],
    });
  }

  /**
   * Over the Lambda's log group: its request lines carry the app, the key id, the 401 reason and the source IP
   * that the access log lacks. Named `<serviceName>/...`, which the console shows as a folder.
   */
  private createQueries(logGroup: logs.ILogGroup): Record<PaymentApiQuery, logs.QueryDefinition> {
    const query = (key: PaymentApiQuery): logs.QueryDefinition => {
      const { id, name, query: queryString } = SAVED_QUERIES[key];
      return new logs.QueryDefinition(this, id, {
        queryDefinitionName: `${this.serviceName}/${name}`,
        queryString: new logs.QueryString(queryString),
        logGroups: [logGroup],
      });
    };
    return {
      requestsByKey: query('requestsByKey'),
      unauthorizedBySource: query('unauthorizedBySource'),
      keyFailureTimeline: query('keyFailureTimeline'),
    };
  }
}
