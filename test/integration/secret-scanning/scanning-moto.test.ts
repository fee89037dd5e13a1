import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BatchGetSecretValueCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { CreateTopicCommand, SNSClient } from '@aws-sdk/client-sns';
import { createScanningHandler, type ScanningHandler } from '../../../lambda/secret-scanning/create-handler';
import { fetchText } from '../../../lambda/secret-scanning/fetch-text';
import { createSnsLeakNotifier } from '../../../lambda/secret-scanning/leak-notice';
import { PublicKeyCache } from '../../../lambda/secret-scanning/public-keys';
import { SCANNING_CONCURRENT_CALLS } from '../../../lambda/secret-scanning/settings';
import { createSecretsManagerShardStore } from '../../../lambda/secret-scanning/shard-store';
import { createSecretsManagerClient } from '../../../shared/aws/bounded-client';
import { generatePrefixedKey } from '../../../shared/keys/key-format';
import { toCompactDigestForm } from '../../../shared/keys/key-material';
import type { RegistryLayout } from '../../../shared/keys/registry';
import { captureLogs } from '../../support/capture-logger';
import {
  countCommands,
  EMULATOR_CALL_BOUNDS,
  motoClientConfig,
  sharedMoto,
  type CommandCount,
  type MotoServer,
} from '../../support/moto';
import { createMotoRegistry, shardDocuments } from '../../support/registry-moto';
import {
  createGithubSigner,
  publicKeysDocument,
  reportEntry,
  scanningEvent,
} from '../../support/secret-scanning';
import { appOnShard } from '../../support/shards';

/**
 * moto 5.2's BatchGetSecretValue returns each secret's first version once AWSCURRENT has moved by
 * UpdateSecretVersionStage (it reads the secret's default version, which only a plain put moves); Secrets Manager
 * returns AWSCURRENT. Without this, every read after a compare-and-swap write would be stale: the function's
 * compare-and-swap would still refuse to write over it, but at the cost of a wasted version. This middleware gives
 * each entry moto returns the AWSCURRENT value and version, as AWS does.
 */
function batchReadsAwsCurrent(client: SecretsManagerClient): void {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      if (context.commandName !== BatchGetSecretValueCommand.name) return result;
      const output = result.output as {
        SecretValues?: { ARN?: string; SecretString?: string; VersionId?: string }[];
      };
      for (const entry of output.SecretValues ?? []) {
        const current = await client.send(
          new GetSecretValueCommand({ SecretId: entry.ARN, VersionStage: 'AWSCURRENT' }),
        );
        entry.SecretString = current.SecretString;
        entry.VersionId = current.VersionId;
      }
      return result;
    },
    { step: 'initialize', name: 'motoBatchReadsAwsCurrent' },
  );
}

/**
 * The secret scanning function's handler end to end against Secrets Manager's and SNS's APIs (moto), with GitHub's
 * public keys served from a loopback server: a report signed with a key pair made here, each shard of a registry of
 * 24 read in BatchGetSecretValue calls of 20, a true positive ended in its shard by one compare-and-swap write, a
 * repeat and a false positive writing nothing. Every bad request (413, 401, 503 for public keys that cannot be had,
 * 400), refused before any read or write, is test/unit/lambda/secret-scanning/create-handler.test.ts's; a keys URL
 * that stalls, over real HTTP, is fetch-text.test.ts's.
 */
describe('the secret scanning handler against Secrets Manager and SNS (moto)', () => {
  const SHARDS = 24;
  const github = createGithubSigner('7f'.repeat(32));
  const LEAKED = generatePrefixedKey('pay');
  const KEPT = generatePrefixedKey('pay');
  const ELSEWHERE = generatePrefixedKey('pay');
  const leakedApp = appOnShard(21, SHARDS, 'partner');
  const otherApp = appOnShard(3, SHARDS, 'other');

  let moto: MotoServer;
  let client: SecretsManagerClient;
  let sns: SNSClient;
  let topicArn: string;
  let layout: RegistryLayout;
  let keysServer: Server;
  let keysUrl: string;
  let counts: { batch: CommandCount; put: CommandCount };

  beforeAll(async () => {
    moto = await sharedMoto();
    const config = motoClientConfig(moto);
    // Emulator bounds: moto on two busy cores may take seconds for a call the production bounds allow 2 s.
    client = createSecretsManagerClient(EMULATOR_CALL_BOUNDS, config);
    batchReadsAwsCurrent(client);
    counts = {
      batch: countCommands(client, BatchGetSecretValueCommand.name),
      put: countCommands(client, PutSecretValueCommand.name),
    };
    sns = new SNSClient(config);
    topicArn = (await sns.send(new CreateTopicCommand({ Name: 'payment-api-alarms' }))).TopicArn ?? '';

    const texts = Array.from({ length: SHARDS }, () => '{}');
    texts[21] = JSON.stringify({ [leakedApp]: [toCompactDigestForm(LEAKED), toCompactDigestForm(KEPT)] });
    texts[3] = JSON.stringify({ [otherApp]: [ELSEWHERE] });
    ({ layout } = await createMotoRegistry({ secretsManager: client }, { shards: SHARDS, texts }));

    keysServer = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' }).end(publicKeysDocument([github]));
    });
    await new Promise<void>((resolve) => keysServer.listen(0, '127.0.0.1', resolve));
    keysUrl = `http://127.0.0.1:${(keysServer.address() as AddressInfo).port}/meta/public_keys/secret_scanning`;
  });

  beforeEach(() => {
    counts.batch.reset();
    counts.put.reset();
  });

  afterAll(async () => {
    client.destroy();
    sns.destroy();
    keysServer.closeAllConnections();
    await new Promise<void>((resolve) =>
      keysServer.close(() => {
        resolve();
      }),
    );
    await moto.stop();
  });

  /** A fresh execution environment: a cold keys cache, as a new Lambda environment has. */
  function coldHandler(logs = captureLogs()): ScanningHandler {
    return createScanningHandler({
      publicKeys: new PublicKeyCache({
        fetchDocument: () => fetchText(keysUrl, { deadlineMs: 10_000, maxBytes: 64 * 1024 }),
        now: Date.now,
        logger: logs.logger,
      }),
      shards: createSecretsManagerShardStore({
        client,
        shardIds: layout.shardIds,
        concurrency: SCANNING_CONCURRENT_CALLS,
      }),
      logger: logs.logger,
      action: 'revoke',
      keyPrefix: 'pay',
      notify: createSnsLeakNotifier(sns, topicArn),
    });
  }

  /** Each shard's AWSCURRENT version id, and how many versions carry AWSCURRENT or a staging label of ours. */
  async function versions(): Promise<{ current: string[]; labelled: number }> {
    let labelled = 0;
    const current: string[] = [];
    for (const id of layout.shardIds) {
      const listed = await client.send(
        new ListSecretVersionIdsCommand({ SecretId: id, IncludeDeprecated: true }),
      );
      const stages = (listed.Versions ?? []).map(
        (version) => [version.VersionId ?? '', version.VersionStages ?? []] as const,
      );
      current.push(
        ...stages.filter(([, labels]) => labels.includes('AWSCURRENT')).map(([versionId]) => versionId),
      );
      labelled += stages.filter(([, labels]) => labels.includes('payment-api-leak-pending')).length;
    }
    return { current, labelled };
  }

  it('answers a false positive without writing, and a report of none of ours without reading', async () => {
    const before = await versions();
    const handle = coldHandler();

    const unknownKey = await handle(
      scanningEvent(JSON.stringify([reportEntry(generatePrefixedKey('pay'))]), github),
    );
    const batchesForUnknownKey = counts.batch.calls();
    const notOurs = await handle(
      scanningEvent(JSON.stringify([reportEntry('ghp_0123456789abcdefghijklmnopqrstuvwxyz')]), github),
    );

    expect(JSON.parse(unknownKey.body)).toMatchObject([{ label: 'false_positive' }]);
    expect(JSON.parse(notOurs.body)).toMatchObject([{ label: 'false_positive' }]);
    // 24 shards: two BatchGetSecretValue calls of at most 20, and none for a report of nothing of ours.
    expect(batchesForUnknownKey).toBe(2);
    expect(counts.batch.calls()).toBe(2);
    expect(counts.put.calls()).toBe(0);
    expect(await versions()).toEqual(before);
  });

  it('revokes a reported key in its shard with one compare-and-swap write, and a repeat changes nothing', async () => {
    const logs = captureLogs();
    const handle = coldHandler(logs);
    const event = scanningEvent(
      JSON.stringify([reportEntry(LEAKED), reportEntry(ELSEWHERE, 'other_type')]),
      github,
    );

    const first = await handle(event);
    const afterFirst = await versions();
    const writesOfFirst = counts.put.calls();
    const repeat = await coldHandler()(event);

    expect(first.statusCode).toBe(200);
    expect(JSON.parse(first.body)).toEqual([
      { token_raw: LEAKED, token_type: 'payment_api_key', label: 'true_positive' },
      { token_raw: ELSEWHERE, token_type: 'other_type', label: 'true_positive' },
    ]);
    // Two shards touched (21 and 3), one write each.
    expect(writesOfFirst).toBe(2);
    const documents = await shardDocuments(client, layout);
    const leaked = documents.get(21)?.get(leakedApp)?.keys;
    expect(leaked?.[0]?.stored).toBe(toCompactDigestForm(LEAKED));
    expect(Date.parse(leaked?.[0]?.expires ?? '')).toBeLessThanOrEqual(Date.now());
    expect(leaked?.[1]).toEqual({ stored: toCompactDigestForm(KEPT) });
    expect(documents.get(3)?.get(otherApp)?.keys[0]?.expires).toBeDefined();
    // One AWSCURRENT per shard, and no staging label left behind.
    expect(afterFirst.current).toHaveLength(SHARDS);
    expect(afterFirst.labelled).toBe(0);
    expect(logs.entries().filter((entry) => entry.message === 'key_leaked')).toHaveLength(2);
    expect(logs.entries().filter((entry) => entry.message === 'leak notice not sent')).toEqual([]);
    expect(logs.lines.join('\n')).not.toContain(LEAKED);

    expect(repeat.statusCode).toBe(200);
    expect(JSON.parse(repeat.body)).toMatchObject([{ label: 'true_positive' }, { label: 'true_positive' }]);
    expect(counts.put.calls()).toBe(writesOfFirst);
    expect(await versions()).toEqual(afterFirst);
  });
});
