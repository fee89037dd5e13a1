import type { RefreshObserver } from './key-cache';
import { METRIC } from './metric-names';
import type { MetricsRecorder } from './metrics-recorder';

/**
 * What the key cache's refreshes report: each attempt's outcome, counted, for every shard alike. The levels that
 * warn on-call before anyone is refused (KeysExpiringSoon, SecretFill) are measured by the monitor function, for
 * every shard at least hourly: an execution environment reads only the shards its requests needed, and with lazy
 * entries does not build the apps it would count. Only numbers leave here: never an app id, a key id or the secret.
 */
export function refreshMetrics(metrics: MetricsRecorder): RefreshObserver {
  return {
    refreshSucceeded: () => {
      metrics.count(METRIC.keyRefreshSucceeded);
    },
    refreshFailed: () => {
      metrics.count(METRIC.keyRefreshFailed);
    },
  };
}
