import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { shardSlots, type RegistryLayout } from '../../shared/keys/registry';
import type { Logger } from '../../shared/logger';
import {
  measureShard,
  summarizeRegistry,
  type RegistrySummary,
  type ShardMeasurement,
  type ShardOutcome,
} from './measure-registry';
import { readShards } from '../read-shards';
import { registryMetricsLine } from './registry-metrics';

export interface MonitorHandlerOptions {
  readonly client: SecretsManagerClient;
  readonly layout: RegistryLayout;
  readonly logger: Logger;
  /** Keys that expire within this window count in KeysExpiringSoon. */
  readonly keyExpiryWarningMs: number;
  readonly metricsNamespace: string;
  readonly serviceName: string;
  /** BatchGetSecretValue calls in flight at once. */
  readonly concurrency: number;
  /** Where the metrics line goes; default a line on stdout, which Lambda ships to CloudWatch Logs as it is. */
  readonly writeMetrics?: (line: string) => void;
  /** The clock (epoch ms); Date.now unless a test needs a known time. */
  readonly now?: () => number;
}

/** What a run found, returned as the invocation's result. */
export interface MonitorReport extends RegistrySummary {
  readonly slots: number;
  readonly calls: number;
}

export type MonitorHandler = () => Promise<MonitorReport>;

/** Percent to one decimal place: what a log line needs, and what Logs Insights sorts by. */
function tenths(value: number): number {
  return Math.round(value * 10) / 10;
}

function logMeasurement(logger: Logger, measurement: ShardMeasurement): void {
  const { shard, entryProblems, ...numbers } = measurement;
  logger.info('key shard measured', {
    shard,
    state: 'ok',
    ...numbers,
    fillPercent: tenths(numbers.fillPercent),
  });
  if (measurement.malformedEntries > 0) {
    logger.warn('malformed key entries in shard', {
      shard,
      malformedEntries: measurement.malformedEntries,
      problems: entryProblems.join('; '),
    });
  }
}

/**
 * One run of the key registry monitor: reads every shard (BatchGetSecretValue, 20 a call), measures each as the
 * payment Lambda would read it, and reports:
 * - per shard, one log line `key shard measured`: its fill, apps, keys, keys expiring soon, malformed entries and
 *   apps left to move (`state: ok`), or why it could not be measured (`state: unreadable` or `malformed`, level
 *   error), by shard number only, never with its value;
 * - for the registry, one line `key registry measured` (the fullest shard, totals, failed shards, calls) and one
 *   EMF line of three metrics: SecretFill (the fullest shard), KeysExpiringSoon (every shard's) and
 *   KeyShardsUnreadable.
 * A shard that fails is reported and the run goes on; only an unexpected error fails the invocation.
 */
export function createMonitorHandler(options: MonitorHandlerOptions): MonitorHandler {
  const { client, layout, logger } = options;
  const now = options.now ?? Date.now;
  const writeMetrics =
    options.writeMetrics ??
    ((line: string) => {
      process.stdout.write(line + '\n');
    });
  const slots = shardSlots(layout);

  return async () => {
    const startedAt = now();
    const { reads, calls } = await readShards(client, layout.shardIds, options.concurrency);
    const measuredAt = now();
    const outcomes: ShardOutcome[] = reads.map((read) =>
      read.ok
        ? measureShard(read.shard, read.secretString, {
            now: measuredAt,
            expiryWarningMs: options.keyExpiryWarningMs,
            shards: layout.shards,
          })
        : { ok: false, failure: { shard: read.shard, state: 'unreadable', problem: read.problem } },
    );
    for (const outcome of outcomes) {
      if (outcome.ok) logMeasurement(logger, outcome.measurement);
      else logger.error('key shard measured', { ...outcome.failure });
    }

    const summary = summarizeRegistry(outcomes);
    logger.info('key registry measured', {
      shards: layout.shards,
      previousShards: layout.previousShards,
      slots,
      measuredShards: summary.measuredShards,
      failedShards: summary.failedShards.length,
      failedShardList: summary.failedShards.join(','),
      fullestShard: summary.fullest?.shard,
      fullestFillPercent: summary.fullest && tenths(summary.fullest.fillPercent),
      apps: summary.apps,
      keys: summary.keys,
      keysExpiringSoon: summary.keysExpiringSoon,
      appsElsewhere: summary.appsElsewhere,
      calls,
      durationMs: now() - startedAt,
    });
    writeMetrics(
      registryMetricsLine(summary, {
        namespace: options.metricsNamespace,
        serviceName: options.serviceName,
        timestamp: measuredAt,
      }),
    );
    return { ...summary, slots, calls };
  };
}
