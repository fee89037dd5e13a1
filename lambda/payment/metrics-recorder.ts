import type { CountedMetricName } from './metric-names';

/**
 * Where the handler and the key cache report what happened. The Lambda writes it as CloudWatch embedded metric
 * format (emf-metrics.ts); the local server and most tests report nowhere.
 */
export interface MetricsRecorder {
  /** One more event. */
  count(name: CountedMetricName): void;
}

export const NO_METRICS: MetricsRecorder = { count: () => undefined };
