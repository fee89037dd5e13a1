import {
  MEASURED_METRICS,
  SERVICE_DIMENSION,
  type CountedMetricName,
  type MeasuredMetricName,
} from './metric-names';
import type { MetricsRecorder } from './metrics-recorder';

export interface EmfMetrics extends MetricsRecorder {
  /** Writes what was reported since the last flush as one EMF line (nothing when nothing was). */
  flush(): void;
}

export interface EmfMetricsOptions {
  readonly namespace: string;
  /** The `Service` dimension's value: the stack name. */
  readonly serviceName: string;
  /** Default: a line on stdout, which Lambda ships to CloudWatch Logs as it is. */
  readonly write?: (line: string) => void;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

/** The EMF specification's limit of values for one metric in one line. */
const MAX_SAMPLES_PER_LINE = 100;

/**
 * Metrics in CloudWatch embedded metric format: one JSON line per invocation, which CloudWatch turns into metrics
 * with no API call. Written by hand rather than with Powertools Metrics: that library adds 13 KB to a bundle held
 * to 200 KB, and gives every metric a lower-case `service` dimension (and its cold-start metric a
 * `function_name` one) where the operators' contract is exactly one dimension, `Service`. The format is small:
 * test/support/emf.ts checks every line against its specification.
 *
 * A count reported more than once before a flush is written once, with the sum (unit Count, read as Sum). A
 * measured level is written with every sample taken since the last flush (one value, or an array of them), so
 * CloudWatch's Maximum and Average see each sample.
 */
export function createEmfMetrics(options: EmfMetricsOptions): EmfMetrics {
  const write =
    options.write ??
    ((line: string) => {
      process.stdout.write(line + '\n');
    });
  const now = options.now ?? Date.now;
  let counts = new Map<CountedMetricName, number>();
  let samples = new Map<MeasuredMetricName, number[]>();
  return {
    count: (name) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
    },
    measure: (name, value) => {
      const taken = samples.get(name) ?? [];
      // A level sampled at each key refresh: far fewer than the limit between two invocations' flushes.
      if (Number.isFinite(value) && taken.length < MAX_SAMPLES_PER_LINE) samples.set(name, [...taken, value]);
    },
    flush: () => {
      if (counts.size === 0 && samples.size === 0) return;
      const measured = [...samples].map(([name, values]) => [name, values.length === 1 ? values[0] : values]);
      write(
        JSON.stringify({
          _aws: {
            Timestamp: now(),
            CloudWatchMetrics: [
              {
                Namespace: options.namespace,
                Dimensions: [[SERVICE_DIMENSION]],
                Metrics: [
                  ...[...counts.keys()].map((name) => ({ Name: name, Unit: 'Count' })),
                  ...[...samples.keys()].map((name) => ({ Name: name, Unit: MEASURED_METRICS[name] })),
                ],
              },
            ],
          },
          [SERVICE_DIMENSION]: options.serviceName,
          ...Object.fromEntries(counts),
          ...Object.fromEntries(measured),
        }),
      );
      counts = new Map();
      samples = new Map();
    },
  };
}
