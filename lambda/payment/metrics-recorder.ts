import type { CountedMetricName, MeasuredMetricName } from './metric-names';

/**
 * Where the handler and the key cache report what happened. The Lambda writes it as CloudWatch embedded metric
 * format (emf-metrics.ts); the local server and most tests report nowhere.
 */
export interface MetricsRecorder {
  /** One more event. */
  count(name: CountedMetricName): void;
  /** One sample of a level, measured now (the keys expiring soon, the secret's fill). */
  measure(name: MeasuredMetricName, value: number): void;
}

export const NO_METRICS: MetricsRecorder = { count: () => undefined, measure: () => undefined };
