import type { MetricName } from './metric-names';

/**
 * Where the handler and the key cache count what happened, one at a time. The Lambda writes the counts as
 * CloudWatch embedded metric format (emf-metrics.ts); the local server and most tests count nowhere.
 */
export interface MetricsRecorder {
  count(name: MetricName): void;
}

export const NO_METRICS: MetricsRecorder = { count: () => undefined };
