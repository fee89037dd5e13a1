import {
  BatchGetSecretValueCommand,
  SecretsManagerClient,
  type BatchGetSecretValueCommandInput,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { createMonitorHandler } from '../../../../lambda/registry-monitor/create-monitor-handler';
import { secretRegistryLayout, type RegistryLayout } from '../../../../shared/keys/registry';
import { captureLogs } from '../../../support/capture-logger';
import { emfProblems, readEmfLines } from '../../../support/emf';
import { appsOfShard, DAY_MS, KEYS, NOW, WARNING_MS } from './fixtures';

const secretsManager = mockClient(SecretsManagerClient);
const SHARD_ZERO = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:keys-AbCdEf';

/** Answers each id with the value `values` gives its shard; an id without one is refused. */
function serve(layout: RegistryLayout, values: Readonly<Record<number, string>>): void {
  secretsManager.on(BatchGetSecretValueCommand).callsFake((input: BatchGetSecretValueCommandInput) => {
    const ids = input.SecretIdList ?? [];
    const shardOfId = (id: string): number => layout.shardIds.indexOf(id);
    return {
      SecretValues: ids
        .filter((id) => values[shardOfId(id)] !== undefined)
        .map((id) => ({
          ARN: id.startsWith('arn:') ? id : `arn:x:${id}-AbCdEf`,
          Name: id,
          SecretString: values[shardOfId(id)],
        })),
      Errors: ids
        .filter((id) => values[shardOfId(id)] === undefined)
        .map((id) => ({ SecretId: id, ErrorCode: 'AccessDeniedException', Message: 'not allowed' })),
    };
  });
}

function run(layout: RegistryLayout) {
  const logs = captureLogs();
  const metricLines: string[] = [];
  const handler = createMonitorHandler({
    client: new SecretsManagerClient({ region: 'eu-west-1' }),
    layout,
    logger: logs.logger,
    keyExpiryWarningMs: WARNING_MS,
    metricsNamespace: 'PaymentApi',
    serviceName: 'PaymentApi-staging',
    concurrency: 4,
    writeMetrics: (line) => metricLines.push(line),
    now: () => NOW,
  });
  return { handler, logs, metricLines };
}

describe('the key registry monitor', () => {
  const layout = secretRegistryLayout({
    shardZeroId: SHARD_ZERO,
    namePrefix: 'payment-api/PaymentApi-staging/keys/',
    shards: 4,
  });
  const [expiringApp] = appsOfShard(1, 4, 1);
  const values: Record<number, string> = {
    0: JSON.stringify(Object.fromEntries(appsOfShard(0, 4, 3).map((appId) => [appId, KEYS.plain]))),
    1: JSON.stringify({
      [expiringApp ?? '']: [{ key: KEYS.expiring, expires: new Date(NOW + 2 * DAY_MS).toISOString() }],
      ...Object.fromEntries(appsOfShard(1, 4, 40, 'big').map((appId) => [appId, [KEYS.lasting, KEYS.other]])),
    }),
    3: `{"${appsOfShard(3, 4, 1)[0] ?? ''}": "${KEYS.other}"`,
  };

  beforeEach(() => {
    secretsManager.reset();
    serve(layout, values);
  });

  it('reads every shard in one call, the ones no request touched included, returns what it found, and logs the registry as a whole: the fullest shard, the totals, the failed shards and its calls', async () => {
    const { handler, logs } = run(layout);

    const report = await handler();

    expect(secretsManager.commandCalls(BatchGetSecretValueCommand)).toHaveLength(1);
    expect(report).toEqual({
      slots: 4,
      calls: 1,
      measuredShards: 2,
      failedShards: [2, 3],
      fullest: {
        shard: 1,
        fillPercent: expect.any(Number) as unknown,
        bytes: Buffer.byteLength(values[1] ?? ''),
      },
      apps: 44,
      keys: 84,
      keysExpiringSoon: 1,
      appsElsewhere: 0,
    });
    expect(logs.entries().find((entry) => entry.message === 'key registry measured')).toMatchObject({
      shards: 4,
      slots: 4,
      measuredShards: 2,
      failedShards: 2,
      failedShardList: '2,3',
      fullestShard: 1,
      apps: 44,
      keys: 84,
      keysExpiringSoon: 1,
      calls: 1,
    });
  });

  it('logs one line per shard, by number: its numbers when measured, why not when unreadable or malformed', async () => {
    const { handler, logs } = run(layout);

    await handler();

    const shardLines = logs.entries().filter((entry) => entry.message === 'key shard measured');
    expect(shardLines).toEqual([
      expect.objectContaining({
        level: 'info',
        shard: 0,
        state: 'ok',
        apps: 3,
        keys: 3,
        keysExpiringSoon: 0,
      }),
      expect.objectContaining({
        level: 'info',
        shard: 1,
        state: 'ok',
        apps: 41,
        keys: 81,
        keysExpiringSoon: 1,
      }),
      expect.objectContaining({
        level: 'error',
        shard: 2,
        state: 'unreadable',
        problem: 'AccessDeniedException: not allowed',
      }),
      expect.objectContaining({
        level: 'error',
        shard: 3,
        state: 'malformed',
        problem: 'secret is not valid JSON',
      }),
    ]);
    expect(shardLines[1]).toMatchObject({
      bytes: Buffer.byteLength(values[1] ?? ''),
      fillPercent: Math.round((Buffer.byteLength(values[1] ?? '') / 65_536) * 1000) / 10,
      malformedEntries: 0,
      appsElsewhere: 0,
    });
  });

  it('emits one EMF line: the fullest shard’s fill, the keys expiring soon over every shard, and the shards it could not measure; never a key, an app id or a shard’s value in it or the logs', async () => {
    // Arrange
    const { handler, logs, metricLines } = run(layout);

    // Act
    await handler();

    // Assert: the names, units and one Service dimension the alarms (and operators' own) have always read.
    expect(metricLines).toHaveLength(1);
    expect(emfProblems(JSON.parse(metricLines[0] ?? '{}'))).toEqual([]);
    const [line] = readEmfLines(metricLines.join('\n')).lines;
    expect(line).toEqual({
      namespace: 'PaymentApi',
      dimensionSets: [['Service']],
      dimensions: { Service: 'PaymentApi-staging' },
      counts: expect.any(Object) as unknown,
      samples: {
        SecretFill: [(Buffer.byteLength(values[1] ?? '') / 65_536) * 100],
        KeysExpiringSoon: [1],
        KeyShardsUnreadable: [2],
      },
      units: { SecretFill: 'Percent', KeysExpiringSoon: 'Count', KeyShardsUnreadable: 'Count' },
    });
    const written = [...logs.lines, ...metricLines].join('\n');
    for (const key of Object.values(KEYS)) expect(written).not.toContain(key);
    expect(written).not.toContain(expiringApp);
    expect(written).not.toContain('big-');
  });

  it('emits only the count of unreadable shards when none could be measured: the levels stay as they were', async () => {
    // Arrange
    secretsManager.reset();
    serve(layout, {});
    const { handler, metricLines } = run(layout);

    // Act
    const report = await handler();

    // Assert
    expect(report.failedShards).toEqual([0, 1, 2, 3]);
    expect(readEmfLines(metricLines.join('\n')).lines[0]?.samples).toEqual({ KeyShardsUnreadable: [4] });
  });

  it('reads every shard either count uses while a reshard is under way, 20 a call', async () => {
    // Arrange: from 30 shards to 24: 30 to read, 2 calls.
    const resharding = secretRegistryLayout({
      shardZeroId: SHARD_ZERO,
      namePrefix: 'payment-api/P/keys/',
      shards: 24,
      previousShards: 30,
    });
    secretsManager.reset();
    serve(resharding, Object.fromEntries(resharding.shardIds.map((_, shard) => [shard, '{}'])));
    const { handler, logs } = run(resharding);

    // Act
    const report = await handler();

    // Assert
    expect(report).toMatchObject({ slots: 30, calls: 2, measuredShards: 30, failedShards: [] });
    expect(logs.entries().find((entry) => entry.message === 'key registry measured')).toMatchObject({
      shards: 24,
      previousShards: 30,
      slots: 30,
    });
  });
});
