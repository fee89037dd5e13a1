import {
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import {
  createRotationHandler,
  type RotationHandler,
} from '../../../lambda/rotation/create-rotation-handler';
import { ROTATION_STEPS } from '../../../lambda/rotation/rotation-rules';
import { captureLogs } from '../../support/capture-logger';
import { createMotoRegistry } from '../../support/registry-moto';
import { appsOnEveryShard } from '../../support/shards';
import {
  beginMotoRotation,
  countCommands,
  motoSecretsManager,
  sharedMoto,
  type CommandCount,
  type MotoServer,
} from '../../support/moto';

const KEY = 'test-rotation-shards-key-0123456789abcdef';
const SHARDS = 4;

/**
 * Scheduled rotation of a registry of 4 shards with one function, as the stack sets it up: Secrets Manager invokes
 * it for one shard per rotation (moto cannot invoke it, so the test plays that part, as in rotation-moto.test.ts).
 * Each rotation writes exactly one version of its own shard and nothing elsewhere: a shard's version quota (about
 * 100 within 24 hours) is spent at one version per rotation. That retried steps write nothing more is one secret's
 * behaviour: rotation-moto.test.ts's (its versions) and create-rotation-handler.test.ts's (its calls).
 */
describe('scheduled rotation of every shard (moto)', () => {
  let moto: MotoServer;
  let client: SecretsManagerClient;
  let shardIds: readonly string[];
  let handler: RotationHandler;
  let writes: CommandCount;
  const logs = captureLogs();

  beforeAll(async () => {
    moto = await sharedMoto();
    client = motoSecretsManager(moto);
    // Every write of a version, whatever step makes it: PutSecretValue is the only one.
    writes = countCommands(client, PutSecretValueCommand.name);
    handler = createRotationHandler({ client, keep: 2, periodMs: 30 * 86_400_000, logger: logs.logger });

    const apps = appsOnEveryShard(SHARDS, 2);
    const texts = Array.from({ length: SHARDS }, (_, shard) =>
      JSON.stringify(Object.fromEntries((apps.get(shard) ?? []).map((appId) => [appId, KEY]))),
    );
    ({
      layout: { shardIds },
    } = await createMotoRegistry({ secretsManager: client }, { shards: SHARDS, texts }));
  }, 120_000);

  afterAll(async () => {
    client.destroy();
    await moto.stop();
  });

  /** Every version of every shard, by shard. */
  async function versions(): Promise<string[][]> {
    return Promise.all(
      shardIds.map(async (id) => {
        const output = await client.send(
          new ListSecretVersionIdsCommand({ SecretId: id, IncludeDeprecated: true }),
        );
        return (output.Versions ?? []).map((version) => version.VersionId ?? '').sort();
      }),
    );
  }

  /** A shard's schedule come due: Secrets Manager's part as far as moto does it, then the four steps, in order. */
  async function rotate(shard: number): Promise<string> {
    const token = randomUUID();
    const secretId = shardIds[shard] ?? '';
    await beginMotoRotation(client, secretId, token);
    for (const step of ROTATION_STEPS)
      await handler({ Step: step, SecretId: secretId, ClientRequestToken: token });
    return token;
  }

  // Each shard's versions compared whole: a rotation that wrote anywhere but its own shard would show here.
  it('writes one version per shard when every shard’s schedule comes due, on the one function, and nothing in the others', async () => {
    // Arrange
    const before = await versions();
    writes.reset();

    // Act
    const tokens: string[] = [];
    for (let shard = 0; shard < SHARDS; shard++) tokens.push(await rotate(shard));

    // Assert
    const after = await versions();
    expect(writes.calls()).toBe(SHARDS);
    expect(after).toEqual(before.map((ids, shard) => [...ids, tokens[shard] ?? ''].sort()));
  });

  afterEach(() => {
    expect(logs.lines.join('\n')).not.toContain(KEY);
  });
});
