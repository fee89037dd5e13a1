import { SERVICE_DIMENSION, type CountedMetricName } from './metric-names';
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

/**
 * Metrics in CloudWatch embedded metric format: one JSON line per invocation, which CloudWatch turns into metrics
 * with no API call. Written by hand rather than with Powertools Metrics: that library adds 13 KB to a bundle held
 * to 200 KB, and gives every metric a lower-case `service` dimension (and its cold-start metric a
 * `function_name` one) where the operators' contract is exactly one dimension, `Service`. The format is small:
 * test/support/emf.ts checks every line against its specification.
 *
 * A count reported more than once before a flush is written once, with the sum (unit Count, read as Sum).
 */
export function createEmfMetrics(options: EmfMetricsOptions): EmfMetrics {
  const write =
    options.write ??
    ((line: string) => {
      process.stdout.write(line + '\n');
    });
  const now = options.now ?? Date.now;
  let counts = new Map<CountedMetricName, number>();
  return {
    count: (name) => {
      counts.set(name, (counts.get(name) ?? 0) + 1);
    },
    flush: () => {
      if (counts.size === 0) return;
      write(
        JSON.stringify({
          _aws: {
            Timestamp: now(),
            CloudWatchMetrics: [
              {
                Namespace: options.namespace,
                Dimensions: [[SERVICE_DIMENSION]],
                Metrics: [...counts.keys()].map((name) => ({ Name: name, Unit: 'Count' })),
              },
            ],
          },
          [SERVICE_DIMENSION]: options.serviceName,
          ...Object.fromEntries(counts),
        }),
      );
      counts = new Map();
    },
  };
}
