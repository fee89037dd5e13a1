import { Duration, Stack } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { METRIC, OUTCOME_METRICS, SERVICE_DIMENSION } from '../../lambda/payment/metric-names';
import { REGISTRY_METRIC } from '../../lambda/registry-monitor/metric-names';
import { SECRET_WARNING_FILL_PERCENT } from '../../shared/keys/secret-size';
import type { MonitoringAlarms, RegistryMonitorHealth } from './alarms';
import { ONE_HOUR, ONE_MINUTE, type ServiceMetric } from './service-metrics';

export interface DashboardProps {
  readonly stage: apigateway.Stage;
  readonly handler: lambda.IFunction;
  /** The rotation Lambda, when the secret is rotated on a schedule: it gets a row of its own. */
  readonly rotationFunction?: lambda.IFunction;
  /** The key registry monitor: its runs, and the fullest shards from its log group. */
  readonly registryMonitor: RegistryMonitorHealth & { readonly logGroup: logs.ILogGroup };
  /** Shown by state at the top. */
  readonly alarms: MonitoringAlarms;
  readonly metric: ServiceMetric;
  readonly metricsNamespace: string;
  readonly serviceName: string;
  /** The per-app rate limiter's table, when the stack has one: it gets a row of its own. */
  readonly rateLimitTable?: dynamodb.ITable;
}

const SUM_PER_MINUTE = { statistic: cloudwatch.Stats.SUM, period: ONE_MINUTE };

function graph(
  title: string,
  left: cloudwatch.IMetric[],
  extra: Partial<cloudwatch.GraphWidgetProps> = {},
): cloudwatch.GraphWidget {
  return new cloudwatch.GraphWidget({ title, left, width: 12, height: 6, leftYAxis: { min: 0 }, ...extra });
}

function percentiles(
  metricFor: (options: cloudwatch.MetricOptions) => cloudwatch.Metric,
  what: string,
): cloudwatch.Metric[] {
  return (['p50', 'p99'] as const).map((statistic) =>
    metricFor({ statistic, period: ONE_MINUTE, label: `${what} ${statistic}` }),
  );
}

/**
 * The keys' own health: refusals of keys that matched (a partner to call), then the key registry monitor's hourly
 * levels over every shard (the SecretNearlyFull threshold drawn on the fullest shard's fill), and which shards are
 * fullest, read from the monitor's log lines: a few hundred short lines an hour, so the widget scans kilobytes.
 */
function keyHealthRows(
  metric: ServiceMetric,
  monitor: DashboardProps['registryMonitor'],
): cloudwatch.IWidget[][] {
  const maxPerHour = { statistic: cloudwatch.Stats.MAXIMUM, period: ONE_HOUR };
  return [
    [
      graph('Refused keys that matched: expired, network not allowed (per minute)', [
        metric(METRIC.expiredKey, { ...SUM_PER_MINUTE, label: METRIC.expiredKey }),
        metric(METRIC.sourceNotAllowed, { ...SUM_PER_MINUTE, label: METRIC.sourceNotAllowed }),
      ]),
      graph(
        'Key registry, measured hourly: keys expiring soon, unreadable shards, and the fullest shard in %',
        [
          metric(REGISTRY_METRIC.keysExpiringSoon, {
            ...maxPerHour,
            label: REGISTRY_METRIC.keysExpiringSoon,
          }),
          metric(REGISTRY_METRIC.shardsUnreadable, {
            ...maxPerHour,
            label: REGISTRY_METRIC.shardsUnreadable,
          }),
        ],
        {
          right: [
            metric(REGISTRY_METRIC.secretFill, {
              ...maxPerHour,
              label: `${REGISTRY_METRIC.secretFill}, fullest shard (%)`,
            }),
          ],
          rightYAxis: { min: 0, max: 100 },
          rightAnnotations: [{ value: SECRET_WARNING_FILL_PERCENT, label: 'SecretNearlyFull' }],
        },
      ),
    ],
    [
      new cloudwatch.LogQueryWidget({
        title: 'Fullest key shards, at the latest hourly measurement',
        logGroupNames: [monitor.logGroup.logGroupName],
        queryLines: [
          'filter message = "key shard measured"',
          'stats latest(fillPercent) as fill, latest(state) as shardState, latest(apps) as appCount, latest(keysExpiringSoon) as expiringSoon by shard',
          'sort fill desc',
          'limit 10',
        ],
        width: 12,
        height: 6,
      }),
      graph('Key registry monitor: runs, failed and not delivered (per hour)', [
        monitor.handler.metricInvocations({
          statistic: cloudwatch.Stats.SUM,
          period: ONE_HOUR,
          label: 'Runs',
        }),
        monitor.handler.metricErrors({
          statistic: cloudwatch.Stats.SUM,
          period: ONE_HOUR,
          label: 'Runs failed',
        }),
        monitor.failedInvocations.with({ period: ONE_HOUR, label: 'Runs not delivered' }),
      ]),
    ],
  ];
}

/**
 * The per-app limits: the 429s they answered and the requests they could not count, then the table's side of it
 * (slow or throttled UpdateItem calls are what makes the limiter unavailable).
 */
function rateLimitRow(metric: ServiceMetric, table: dynamodb.ITable): cloudwatch.IWidget[] {
  return [
    graph('Per-app rate limits: 429s and limiter unavailable (per minute)', [
      metric(METRIC.throttled, { ...SUM_PER_MINUTE, label: METRIC.throttled }),
      metric(METRIC.rateLimiterUnavailable, { ...SUM_PER_MINUTE, label: METRIC.rateLimiterUnavailable }),
    ]),
    graph(
      'Rate limit table: UpdateItem latency (ms) and throttled writes (per minute)',
      percentiles(
        (options) =>
          table.metricSuccessfulRequestLatency({ ...options, dimensionsMap: { Operation: 'UpdateItem' } }),
        'UpdateItem',
      ),
      {
        right: [table.metric('WriteThrottleEvents', { ...SUM_PER_MINUTE, label: 'Throttled writes' })],
        rightYAxis: { min: 0 },
      },
    ),
  ];
}

/** Rotation runs every few days, so its runs are counted per hour. */
function rotationRow(rotationFunction: lambda.IFunction): cloudwatch.IWidget[] {
  const sumPerHour = { statistic: cloudwatch.Stats.SUM, period: Duration.hours(1) };
  return [
    graph('Key rotation: steps run and failed (per hour)', [
      rotationFunction.metricInvocations({ ...sumPerHour, label: 'Steps run' }),
      rotationFunction.metricErrors({ ...sumPerHour, label: 'Steps failed' }),
    ]),
  ];
}

/** The service's dashboard, created in `scope` as `Dashboard`. */
export function createDashboard(scope: Construct, props: DashboardProps): cloudwatch.Dashboard {
  const { stage, handler, metric, serviceName, rateLimitTable } = props;
  // Without per-app limits nothing is ever throttled by the Lambda: the graph keeps the outcomes it can show.
  const outcomes = OUTCOME_METRICS.filter(
    (name) => rateLimitTable !== undefined || name !== METRIC.throttled,
  );
  const rows: cloudwatch.IWidget[][] = [
    [
      new cloudwatch.TextWidget({
        markdown:
          `# ${serviceName}: POST /payment\n` +
          `Metrics in namespace \`${props.metricsNamespace}\`, dimension \`${SERVICE_DIMENSION}=${serviceName}\`. ` +
          `Saved queries: Logs Insights, folder \`${serviceName}\`. Runbook: docs/operations.md.`,
        width: 24,
        height: 2,
      }),
    ],
    [
      new cloudwatch.AlarmStatusWidget({
        title: 'Alarm states',
        alarms: Object.values(props.alarms),
        width: 24,
        height: 3,
      }),
    ],
    [
      graph(
        'Requests by outcome (per minute)',
        outcomes.map((name) => metric(name, { ...SUM_PER_MINUTE, label: name })),
        { stacked: true },
      ),
      graph('API requests, 4XX and 5XX (per minute)', [
        stage.metricCount({ ...SUM_PER_MINUTE, label: 'Requests' }),
        stage.metricClientError({ ...SUM_PER_MINUTE, label: '4XX' }),
        stage.metricServerError({ ...SUM_PER_MINUTE, label: '5XX' }),
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
            handler.metricThrottles({ ...SUM_PER_MINUTE, label: 'Throttles' }),
            handler.metricErrors({ ...SUM_PER_MINUTE, label: 'Errors' }),
          ],
          rightYAxis: { min: 0 },
        },
      ),
      graph('Key refreshes and stale keys (per minute)', [
        metric(METRIC.keyRefreshSucceeded, { ...SUM_PER_MINUTE, label: METRIC.keyRefreshSucceeded }),
        metric(METRIC.keyRefreshFailed, { ...SUM_PER_MINUTE, label: METRIC.keyRefreshFailed }),
        metric(METRIC.staleKeysServed, { ...SUM_PER_MINUTE, label: METRIC.staleKeysServed }),
        metric(METRIC.coldStart, { ...SUM_PER_MINUTE, label: METRIC.coldStart }),
      ]),
    ],
    ...keyHealthRows(metric, props.registryMonitor),
    ...(rateLimitTable ? [rateLimitRow(metric, rateLimitTable)] : []),
    ...(props.rotationFunction ? [rotationRow(props.rotationFunction)] : []),
  ];

  return new cloudwatch.Dashboard(scope, 'Dashboard', {
    // Dashboards are global to the account (their ARNs have no Region): the Region keeps two deployments of
    // one stack name apart.
    dashboardName: `${serviceName}-${Stack.of(scope).region}`,
    defaultInterval: Duration.hours(3),
    widgets: rows,
  });
}
