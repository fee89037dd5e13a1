import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { METRICS_ENV } from '../lambda/payment/metric-names';
import { ENV } from '../lambda/payment/settings';
import { SHARDS_PER_CALL } from '../lambda/read-shards';
import { MONITOR_CALL_BOUNDS, MONITOR_CONCURRENT_CALLS } from '../lambda/registry-monitor/settings';
import type { LogLevel } from '../shared/logger';
import { allowBatchSecretReads } from './batch-secret-reads';
import { createBundledFunction, lambdaEntry } from './bundled-function';
import type { KeyRegistry } from './key-registry';

/**
 * How often every shard is measured. The alarms on what it measures (SecretNearlyFull, KeysExpiringSoon,
 * KeyShardsUnreadable) read one-hour periods, so each period holds one measurement.
 */
export const MONITOR_EVERY = Duration.hours(1);

/** The reads' worst case for `slots` shards: calls of 20, 4 at a time, each running to its deadline. */
export function monitorReadWorstCaseMs(slots: number): number {
  return (
    Math.ceil(Math.ceil(slots / SHARDS_PER_CALL) / MONITOR_CONCURRENT_CALLS) *
    MONITOR_CALL_BOUNDS.callDeadlineMs
  );
}

/** Up to 256 shards (13 calls, 4 at a time): 60 s. */
export const MONITOR_READ_WORST_CASE_MS = monitorReadWorstCaseMs(256);

/**
 * The reads' worst case (60 s) plus parsing 256 full shards as the payment Lambda does (each a few tens of
 * milliseconds of CPU at this memory), with room to spare.
 */
export const MONITOR_TIMEOUT = Duration.minutes(3);

/**
 * The function's time-out for a registry of `slots` shards: MONITOR_TIMEOUT up to 256 (as before larger registries);
 * past that, the reads' worst case (195 s for 1,024) plus 2 minutes for parsing four times the shards.
 */
export function monitorTimeout(slots: number): Duration {
  if (slots <= 256) return MONITOR_TIMEOUT;
  return Duration.minutes(Math.ceil((monitorReadWorstCaseMs(slots) + 120_000) / 60_000));
}

/** CPU comes with memory: at 512 MiB a full shard parses in a few tens of milliseconds. */
const MONITOR_MEMORY_MIB = 512;

export interface KeyRegistryMonitorProps {
  /** The registry to measure: the monitor reads every shard either shard count uses. */
  readonly registry: KeyRegistry;
  /** How long before its expiry a key counts in KeysExpiringSoon: the payment Lambda's setting. */
  readonly keyExpiryWarning: Duration;
  /** Namespace of the metrics. */
  readonly metricsNamespace: string;
  /** The `Service` dimension of the metrics: the stack name. */
  readonly serviceName: string;
  /** Retention of the monitor's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Lowest level the monitor logs. */
  readonly logLevel: LogLevel;
}

/**
 * The key registry watched as a whole: a function of its own (lambda/registry-monitor), run every hour by an
 * EventBridge schedule, reads every shard with BatchGetSecretValue (20 a call) and reports the fullest shard's fill,
 * the keys expiring soon and the shards it could not read as metrics, and each shard's numbers as log lines. A
 * payment Lambda environment sees only the shards its requests fetched; this sees every one, requested or not.
 *
 * Its own function rather than the rotation function's: rotation exists only when asked for, runs when Secrets
 * Manager invokes it for one secret, and may write every shard; the monitor runs in every stack, reads every shard
 * at once, and may only read.
 */
export class KeyRegistryMonitor extends Construct {
  public readonly handler: NodejsFunction;
  /** The hourly EventBridge rule that invokes the function. */
  public readonly schedule: events.Rule;

  constructor(scope: Construct, id: string, props: KeyRegistryMonitorProps) {
    super(scope, id);
    this.handler = createBundledFunction(this, 'Function', {
      entry: lambdaEntry('registry-monitor', 'index.ts'),
      description:
        'payment-api: measures every shard of the key registry each hour (fill, apps, keys, keys expiring soon)',
      roleDescription: 'payment-api key registry monitor: writes its own log group and reads every key shard',
      memorySize: MONITOR_MEMORY_MIB,
      timeout: monitorTimeout(props.registry.slots),
      logRetention: props.logRetention,
      environment: {
        ...props.registry.environment,
        [ENV.keyExpiryWarningDays]: String(props.keyExpiryWarning.toDays()),
        [ENV.logLevel]: props.logLevel,
        [METRICS_ENV.namespace]: props.metricsNamespace,
        [METRICS_ENV.serviceName]: props.serviceName,
      },
    });
    props.registry.grantRead(this.handler);
    allowBatchSecretReads(this.handler, 'monitor');
    // A failed run is not retried: the next hour's run measures afresh, and KeyMonitorFailing counts each failure.
    this.handler.configureAsyncInvoke({ retryAttempts: 0 });

    this.schedule = new events.Rule(this, 'Schedule', {
      description: 'payment-api: runs the key registry monitor every hour',
      schedule: events.Schedule.rate(MONITOR_EVERY),
      targets: [
        // A run delayed past the next one's time is of no use.
        new targets.LambdaFunction(this.handler, { retryAttempts: 2, maxEventAge: MONITOR_EVERY }),
      ],
    });
  }

  /** Runs the schedule could not deliver to the function (a permission removed, the function gone). */
  public metricFailedInvocations(options: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/Events',
      metricName: 'FailedInvocations',
      dimensionsMap: { RuleName: this.schedule.ruleName },
      statistic: cloudwatch.Stats.SUM,
      ...options,
    });
  }
}
