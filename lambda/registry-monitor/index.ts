/**
 * Key registry monitor entry point: an EventBridge schedule invokes it every hour, and it measures every shard of
 * the registry (create-monitor-handler.ts). Region and credentials come from the Lambda environment; the registry
 * from REGISTRY_ENV, as the payment Lambda's.
 */
import { createSecretsManagerClient } from '../../shared/aws/bounded-client';
import { createJsonLogger } from '../../shared/logger';
import { createMonitorHandler } from './create-monitor-handler';
import { MONITOR_CALL_BOUNDS, MONITOR_CONCURRENT_CALLS, readMonitorSettings } from './settings';

const settings = readMonitorSettings(process.env);

export const handler = createMonitorHandler({
  client: createSecretsManagerClient(MONITOR_CALL_BOUNDS),
  layout: settings.layout,
  logger: createJsonLogger(settings.logLevel, undefined, { service: settings.serviceName }),
  keyExpiryWarningMs: settings.keyExpiryWarningMs,
  metricsNamespace: settings.metricsNamespace,
  serviceName: settings.serviceName,
  concurrency: MONITOR_CONCURRENT_CALLS,
});
