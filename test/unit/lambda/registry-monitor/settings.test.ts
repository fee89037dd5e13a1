import { readMonitorSettings } from '../../../../lambda/registry-monitor/settings';

const SHARD_ZERO = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:keys-AbCdEf';

describe('readMonitorSettings', () => {
  it('reads the registry as the payment Lambda does, and the settings it shares with it', () => {
    expect(
      readMonitorSettings({
        KEYS_SECRET_ID: SHARD_ZERO,
        KEY_SHARDS: '3',
        KEY_SHARDS_PREVIOUS: '2',
        KEY_SHARD_NAME_PREFIX: 'payment-api/P/keys/',
        KEY_EXPIRY_WARNING_DAYS: '30',
        LOG_LEVEL: 'warn',
        METRICS_NAMESPACE: 'Payments/Staging',
        SERVICE_NAME: 'P',
      }),
    ).toEqual({
      layout: {
        shards: 3,
        previousShards: 2,
        shardIds: [SHARD_ZERO, 'payment-api/P/keys/shard-1', 'payment-api/P/keys/shard-2'],
      },
      keyExpiryWarningMs: 30 * 86_400_000,
      logLevel: 'warn',
      serviceName: 'P',
      metricsNamespace: 'Payments/Staging',
    });
  });

  it('reads a one-shard registry from KEYS_SECRET_ID alone, with the defaults', () => {
    expect(readMonitorSettings({ KEYS_SECRET_ID: SHARD_ZERO })).toEqual({
      layout: { shards: 1, shardIds: [SHARD_ZERO] },
      keyExpiryWarningMs: 14 * 86_400_000,
      logLevel: 'info',
      serviceName: 'PaymentApi',
      metricsNamespace: 'PaymentApi',
    });
  });
});
