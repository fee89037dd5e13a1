import {
  BatchGetSecretValueCommand,
  DeleteSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { createMonitorHandler } from '../../../lambda/registry-monitor/create-monitor-handler';
import { MONITOR_CONCURRENT_CALLS } from '../../../lambda/registry-monitor/settings';
import type { RegistryLayout } from '../../../shared/keys/registry';
import { captureLogs } from '../../support/capture-logger';
import { readEmfLines } from '../../support/emf';
import { createMotoRegistry } from '../../support/registry-moto';
import { appsOnEveryShard } from '../../support/shards';
import {
  countCommands,
  motoSecretsManager,
  sharedMoto,
  type CommandCount,
  type MotoServer,
} from '../../support/moto';

const KEY = 'test-monitor-moto-key-0123456789abcdef';
const DAY_MS = 86_400_000;

/**
 * The monitor against Secrets Manager's API (moto): a registry of 45 shards, read in 3 BatchGetSecretValue calls
 * (counted at the client), every shard measured whether or not anything asked for it, and a shard that is gone, one
 * that is malformed and one that holds a binary value each reported by number while the others are measured.
 */
describe('the key registry monitor against the Secrets Manager API (moto)', () => {
  const SHARDS = 45;
  let moto: MotoServer;
  let client: SecretsManagerClient;
  let layout: RegistryLayout;
  let batchCalls: CommandCount;
  /** The apps of each shard, each in its own shard under 45. */
  const appsByShard = new Map<number, string[]>();

  beforeAll(async () => {
    moto = await sharedMoto();
    client = motoSecretsManager(moto);
    batchCalls = countCommands(client, BatchGetSecretValueCommand.name);
    for (const [shard, apps] of appsOnEveryShard(SHARDS, 2)) appsByShard.set(shard, apps);
    const valueOf = (shard: number): string => {
      const apps = appsByShard.get(shard) ?? [];
      // Shard 7's first app has its only key expiring in 3 days.
      return JSON.stringify(
        Object.fromEntries(
          apps.map((appId, position) => [
            appId,
            shard === 7 && position === 0
              ? [{ key: KEY, expires: new Date(Date.now() + 3 * DAY_MS).toISOString() }]
              : KEY,
          ]),
        ),
      );
    };
    const texts = Array.from({ length: SHARDS }, (_, shard) =>
      shard === 30 ? '["not", "an object"]' : valueOf(shard),
    );
    ({ layout } = await createMotoRegistry({ secretsManager: client }, { shards: SHARDS, texts }));
    // Shard 12 is gone, and shard 41 holds a binary value.
    await client.send(
      new DeleteSecretCommand({ SecretId: layout.shardIds[12], ForceDeleteWithoutRecovery: true }),
    );
    await client.send(
      new PutSecretValueCommand({ SecretId: layout.shardIds[41], SecretBinary: new Uint8Array([7]) }),
    );
  }, 120_000);

  afterAll(async () => {
    client.destroy();
    await moto.stop();
  });

  it('reads 45 shards in 3 calls, measures the 42 it can, and names the 3 it cannot by number', async () => {
    // Arrange
    const logs = captureLogs();
    const metricLines: string[] = [];
    batchCalls.reset();
    const handler = createMonitorHandler({
      client,
      layout,
      logger: logs.logger,
      keyExpiryWarningMs: 14 * DAY_MS,
      metricsNamespace: 'PaymentApi',
      serviceName: 'Moto',
      concurrency: MONITOR_CONCURRENT_CALLS,
      writeMetrics: (line) => metricLines.push(line),
    });

    // Act
    const report = await handler();

    // Assert
    expect(batchCalls.calls()).toBe(3);
    const measuredApps = [...appsByShard.entries()]
      .filter(([shard]) => ![12, 30, 41].includes(shard))
      .reduce((sum, [, apps]) => sum + apps.length, 0);
    expect(report).toMatchObject({
      slots: 45,
      calls: 3,
      measuredShards: 42,
      failedShards: [12, 30, 41],
      apps: measuredApps,
      keys: measuredApps,
      keysExpiringSoon: 1,
      appsElsewhere: 0,
    });
    const failures = logs
      .entries()
      .filter((entry) => entry.message === 'key shard measured' && entry.state !== 'ok')
      .map(({ shard, state, problem }) => ({ shard, state, problem }));
    expect(failures).toEqual([
      {
        shard: 12,
        state: 'unreadable',
        problem: expect.stringContaining('ResourceNotFoundException') as unknown,
      },
      { shard: 30, state: 'malformed', problem: 'secret must be a JSON object mapping App-id to keys' },
      {
        shard: 41,
        state: 'unreadable',
        problem: 'the secret holds no SecretString (binary secrets are not supported)',
      },
    ]);
    expect(readEmfLines(metricLines.join('\n')).lines[0]?.samples).toMatchObject({
      KeysExpiringSoon: [1],
      KeyShardsUnreadable: [3],
    });
    expect([...logs.lines, ...metricLines].join('\n')).not.toContain(KEY);
  });
});
