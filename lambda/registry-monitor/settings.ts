import type { CallBounds } from '../../shared/aws/bounded-client';
import type { RegistryLayout } from '../../shared/keys/registry';
import type { LogLevel } from '../../shared/logger';
import { readKeyExpiryWarningMs, readLambdaSettings } from '../payment/settings';

/**
 * Bounds on each BatchGetSecretValue call. Nobody waits on an answer here, and a call carries up to 20 values of up
 * to 64 KB each, so an attempt may take longer than the payment Lambda's; one call ends within 3 × 5 s + back-off,
 * and never after 15 s.
 */
export const MONITOR_CALL_BOUNDS: CallBounds = {
  maxAttempts: 3,
  connectionTimeoutMs: 1_000,
  attemptTimeoutMs: 5_000,
  callDeadlineMs: 15_000,
};

/** Calls in flight at once: 256 shards are 13 calls, read in 4 rounds. */
export const MONITOR_CONCURRENT_CALLS = 4;

export interface MonitorSettings {
  /** Every shard to read, from the registry's environment (REGISTRY_ENV), as the payment Lambda reads it. */
  readonly layout: RegistryLayout;
  /** Keys that expire within this window count in KeysExpiringSoon: the payment Lambda's setting. */
  readonly keyExpiryWarningMs: number;
  readonly logLevel: LogLevel;
  /** The `Service` dimension of the metrics: the stack name. */
  readonly serviceName: string;
  readonly metricsNamespace: string;
}

type Environment = Readonly<Record<string, string | undefined>>;

/**
 * The registry, plus the settings the monitor shares with the payment Lambda under the same names (the expiry
 * window, the log level, the metrics' namespace and service), read by the Lambda's own reader so both refuse the
 * same values. Throws one line on a missing or invalid setting, which fails the function's start.
 */
export function readMonitorSettings(env: Environment): MonitorSettings {
  const shared = readLambdaSettings(env);
  return {
    layout: shared.registry,
    keyExpiryWarningMs: readKeyExpiryWarningMs(env),
    logLevel: shared.logLevel,
    serviceName: shared.serviceName,
    metricsNamespace: shared.metricsNamespace,
  };
}
