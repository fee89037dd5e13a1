/**
 * One run of the key registry monitor against moto, as the hourly schedule runs it: every shard of a registry read
 * (BatchGetSecretValue calls counted at the client), measured and reported. Shards are filled to 80% with the
 * heaviest measured shape of app (two digests mid-rotation, one expiring, an allowlist of two blocks), the level at
 * which SecretNearlyFull goes off: the most a run parses while the registry is healthy. Figures feed docs/cost.md.
 */
import { BatchGetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { createMonitorHandler } from '../../lambda/registry-monitor/create-monitor-handler';
import { measureShard } from '../../lambda/registry-monitor/measure-registry';
import { MONITOR_CONCURRENT_CALLS } from '../../lambda/registry-monitor/settings';
import { serializeKeyDocument, type DocumentApp } from '../../shared/keys/key-document';
import { SECRET_MAX_BYTES, SECRET_WARNING_FILL_PERCENT } from '../../shared/keys/secret-size';
import { createJsonLogger } from '../../shared/logger';
import { countCommands, motoSecretsManager, type MotoServer } from '../../test/support/moto';
import { createMotoRegistry } from '../../test/support/registry-moto';
import { heaviestApp } from './secret-size';
import { fmt, median } from './stats';

const DAY_MS = 86_400_000;

/** A shard's value filled to just under 80% with heaviest-shape apps named after the shard. */
function shardValue(shard: number): { value: string; apps: number } {
  const limit = (SECRET_MAX_BYTES * SECRET_WARNING_FILL_PERCENT) / 100;
  const document = new Map<string, DocumentApp>();
  for (let index = 0; ; index++) {
    const next = new Map(document).set(`shard${shard}-app${index}`, heaviestApp());
    if (Buffer.byteLength(serializeKeyDocument(next)) > limit) break;
    document.set(`shard${shard}-app${index}`, heaviestApp());
  }
  return { value: serializeKeyDocument(document), apps: document.size };
}

async function oneRun(moto: MotoServer, shards: number): Promise<string> {
  const client = motoSecretsManager(moto);
  const batchCalls = countCommands(client, BatchGetSecretValueCommand.name);
  try {
    const values = Array.from({ length: shards }, (_, shard) => shardValue(shard));
    const { layout } = await createMotoRegistry(
      { secretsManager: client },
      { shards, texts: values.map(({ value }) => value) },
    );

    // Parsing alone: what a run spends in CPU besides waiting for Secrets Manager.
    const parseMs = values.map(({ value }, shard) => {
      const started = process.hrtime.bigint();
      measureShard(shard, value, { now: Date.now(), expiryWarningMs: 14 * DAY_MS, shards });
      return Number(process.hrtime.bigint() - started) / 1e6;
    });

    let logBytes = 0;
    const count = (line: string): void => {
      logBytes += Buffer.byteLength(line) + 1;
    };
    const handler = createMonitorHandler({
      client,
      layout,
      logger: createJsonLogger('info', count, { service: 'bench' }),
      keyExpiryWarningMs: 14 * DAY_MS,
      metricsNamespace: 'PaymentApi',
      serviceName: 'bench',
      concurrency: MONITOR_CONCURRENT_CALLS,
      writeMetrics: count,
    });
    const started = Date.now();
    const report = await handler();
    const runMs = Date.now() - started;
    const apps = values.reduce((sum, { apps: count }) => sum + count, 0);
    return (
      `| ${shards} | ${apps.toLocaleString('en-US')} | ${batchCalls.calls()} | ${report.measuredShards} | ${fmt(runMs, 0)} | ` +
      `${fmt(
        parseMs.reduce((sum, ms) => sum + ms, 0),
        0,
      )} (median ${fmt(median(parseMs), 1)} per shard) | ` +
      `${fmt(logBytes / 1024, 1)} |`
    );
  } finally {
    client.destroy();
  }
}

export async function monitorLines(moto: MotoServer): Promise<string[]> {
  const lines = [
    'Key registry monitor, one run against moto, every shard at 80% with the heaviest shape of app:',
    '| shards | apps | BatchGetSecretValue calls | shards measured | run (ms, this machine) | parsing (ms) | logs written (KB) |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const shards of [1, 16, 64, 256]) lines.push(await oneRun(moto, shards));
  return lines;
}
