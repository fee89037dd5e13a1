import { countKeysExpiringWithin } from '../../shared/keys/keyring';
import type { RefreshObserver } from './key-cache';
import { METRIC } from './metric-names';
import type { MetricsRecorder } from './metrics-recorder';

export interface RefreshMetricsOptions {
  /** Keys that expire within this window of a refresh count in `KeysExpiringSoon`. */
  readonly keyExpiryWarningMs: number;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

/**
 * What the key cache's refreshes report: each attempt's outcome counted, and at each success two levels that warn
 * on-call before anyone is refused: how many keys expire soon, and how full the secret is. Only numbers leave
 * here: never an app id, a key id or the secret.
 */
export function refreshMetrics(
  metrics: MetricsRecorder,
  { keyExpiryWarningMs, now = Date.now }: RefreshMetricsOptions,
): RefreshObserver {
  return {
    refreshSucceeded: ({ keyring, secretSize }) => {
      metrics.count(METRIC.keyRefreshSucceeded);
      metrics.measure(METRIC.keysExpiringSoon, countKeysExpiringWithin(keyring, now(), keyExpiryWarningMs));
      metrics.measure(METRIC.secretFill, secretSize.fillPercent);
    },
    refreshFailed: () => {
      metrics.count(METRIC.keyRefreshFailed);
    },
  };
}
