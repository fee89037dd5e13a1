/**
 * The metrics the key registry monitor emits (CloudWatch embedded metric format), one sample of each per run, and
 * the stack alarms on. `SecretFill` and `KeysExpiringSoon` keep the names, units and the one dimension, `Service`
 * (the stack name), they had when the payment Lambda sampled them at each key refresh, so the SecretNearlyFull and
 * KeysExpiringSoon alarms, and operators' own alarms on them, keep working: keep them exactly.
 *
 * Per shard, the monitor writes log lines instead (see create-monitor-handler.ts): a metric per shard would cost
 * $0.30 a month each, $76.80 for one level over 256 shards, for numbers Logs Insights reads from the log for
 * almost nothing. No app id, key id, key or secret value ever goes into a metric.
 */
export const REGISTRY_METRIC = {
  /** The fullest shard's size, as a percentage of the 65,536 bytes Secrets Manager allows in a secret value. */
  secretFill: 'SecretFill',
  /**
   * Keys still valid that expire within the warning window (KEY_EXPIRY_WARNING_DAYS), in apps whose every key does,
   * summed over every shard read.
   */
  keysExpiringSoon: 'KeysExpiringSoon',
  /** Shards that could not be read, or whose value is not a keyring: the apps there cannot authenticate. */
  shardsUnreadable: 'KeyShardsUnreadable',
} as const;

export type RegistryMetricName = (typeof REGISTRY_METRIC)[keyof typeof REGISTRY_METRIC];

export const REGISTRY_METRIC_UNITS: Readonly<Record<RegistryMetricName, 'Percent' | 'Count'>> = {
  [REGISTRY_METRIC.secretFill]: 'Percent',
  [REGISTRY_METRIC.keysExpiringSoon]: 'Count',
  [REGISTRY_METRIC.shardsUnreadable]: 'Count',
};
