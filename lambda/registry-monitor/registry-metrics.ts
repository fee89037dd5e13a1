import { SERVICE_DIMENSION } from '../payment/metric-names';
import type { RegistrySummary } from './measure-registry';
import { REGISTRY_METRIC, REGISTRY_METRIC_UNITS, type RegistryMetricName } from './metric-names';

export interface RegistryMetricsOptions {
  readonly namespace: string;
  /** The `Service` dimension's value: the stack name. */
  readonly serviceName: string;
  /** Epoch ms of the measurement. */
  readonly timestamp: number;
}

/**
 * The run's metrics as one line of CloudWatch embedded metric format, which CloudWatch turns into metrics without
 * an API call. The levels are left out when no shard could be measured: a 0 would clear SecretNearlyFull and
 * KeysExpiringSoon on no evidence, while a missing sample leaves them as they are (KeyShardsUnreadable then says
 * why). KeyShardsUnreadable is always written: with the function's own errors, it shows the monitor ran.
 */
export function registryMetricsLine(summary: RegistrySummary, options: RegistryMetricsOptions): string {
  const values: Partial<Record<RegistryMetricName, number>> = {
    ...(summary.fullest && {
      [REGISTRY_METRIC.secretFill]: summary.fullest.fillPercent,
      [REGISTRY_METRIC.keysExpiringSoon]: summary.keysExpiringSoon,
    }),
    [REGISTRY_METRIC.shardsUnreadable]: summary.failedShards.length,
  };
  const names = Object.keys(values) as RegistryMetricName[];
  return JSON.stringify({
    _aws: {
      Timestamp: options.timestamp,
      CloudWatchMetrics: [
        {
          Namespace: options.namespace,
          Dimensions: [[SERVICE_DIMENSION]],
          Metrics: names.map((name) => ({ Name: name, Unit: REGISTRY_METRIC_UNITS[name] })),
        },
      ],
    },
    [SERVICE_DIMENSION]: options.serviceName,
    ...values,
  });
}
