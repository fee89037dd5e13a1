import {
  CloudFormationClient,
  DescribeStacksCommand,
  type StackStatus,
} from '@aws-sdk/client-cloudformation';
import {
  BatchGetSecretValueCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
  type SecretValueEntry,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { keyIdOf } from '../../../../shared/keys/key-document';
import {
  secretRegistryLayout,
  serializeRegistryManifest,
  shardsToSearch,
} from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';
import { plainKeysText, runCli } from '../../../support/keys-cli';

const secretsManager = mockClient(SecretsManagerClient);
const cloudFormation = mockClient(CloudFormationClient);
const STACK = 'PaymentApi';
const MANIFEST = `payment-api/${STACK}/keys/registry`;
const SHARD_ZERO = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:PaymentApiKeys-AbCdEf';
const ENV = { AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' };

function layoutOf(shards: number, previousShards?: number) {
  return secretRegistryLayout({
    shardZeroId: SHARD_ZERO,
    namePrefix: `payment-api/${STACK}/keys/`,
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
  });
}

/** The stack DescribeStacks answers with: `outputs` by key. */
function stackWith(status: StackStatus, outputs: Readonly<Record<string, string>>): void {
  cloudFormation.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: STACK,
        StackStatus: status,
        CreationTime: new Date(0),
        Outputs: Object.entries(outputs).map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue })),
      },
    ],
  });
}

/** A registry whose shards hold `texts` (by index; others `{}`), answered by BatchGetSecretValue as AWS does. */
function registry(shards: number, texts: Readonly<Record<number, string>> = {}, previousShards?: number) {
  const layout = layoutOf(shards, previousShards);
  const textOf = (id: string) => texts[layout.shardIds.indexOf(id)] ?? '{}';
  stackWith('UPDATE_COMPLETE', { KeysSecretArn: SHARD_ZERO, KeyRegistry: MANIFEST });
  secretsManager.on(GetSecretValueCommand, { SecretId: MANIFEST }).resolves({
    SecretString: serializeRegistryManifest({ ...layout, keyCacheTtlSeconds: 60 }),
    VersionId: 'm',
  });
  for (const id of layout.shardIds) {
    secretsManager
      .on(GetSecretValueCommand, { SecretId: id })
      .resolves({ SecretString: textOf(id), VersionId: `v-${id}` });
  }
  secretsManager.on(BatchGetSecretValueCommand).callsFake((input: { SecretIdList: string[] }) => ({
    SecretValues: input.SecretIdList.map((id): SecretValueEntry => ({
      ARN: id,
      Name: id,
      SecretString: textOf(id),
      VersionId: `v-${id}`,
      VersionStages: ['AWSCURRENT'],
    })),
    Errors: [],
  }));
  secretsManager.on(ListSecretVersionIdsCommand).callsFake((input: { SecretId: string }) => ({
    Versions: [{ VersionId: `v-${input.SecretId}`, VersionStages: ['AWSCURRENT'], CreatedDate: new Date() }],
  }));
  secretsManager
    .on(PutSecretValueCommand)
    .callsFake((input: { ClientRequestToken: string }) => ({ VersionId: input.ClientRequestToken }));
  secretsManager.on(UpdateSecretVersionStageCommand).resolves({});
  return layout;
}

const cli = (...argv: string[]) => runCli([...argv, '--stack', STACK], ENV);

beforeEach(() => {
  secretsManager.reset();
  cloudFormation.reset();
});

describe('a registry named by its stack', () => {
  it('list reads 45 shards in three BatchGetSecretValue calls of at most 20, and no GetSecretValue of a shard', async () => {
    registry(45, { 7: plainKeysText({ demo: [DEMO_KEY] }) });

    const result = await cli('list');

    expect(result.code).toBe(0);
    expect(result.stdout).toBe(
      `demo: any network; rate limit: the stack's appRateLimit, if set\n  ${keyIdOf(DEMO_KEY)}  never\n`,
    );
    const batches = secretsManager
      .commandCalls(BatchGetSecretValueCommand)
      .map((call) => call.args[0].input.SecretIdList?.length);
    expect(batches).toEqual([20, 20, 5]);
    expect(
      secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId),
    ).toEqual([MANIFEST]);
  });

  it('re-reads on its own a shard whose batch answer is not AWSCURRENT', async () => {
    const layout = registry(3);
    const stale = layout.shardIds[1] ?? '';
    secretsManager.on(BatchGetSecretValueCommand).resolves({
      SecretValues: layout.shardIds.map((id) => ({
        Name: id,
        ARN: id,
        SecretString: id === stale ? plainKeysText({ old: [DEMO_KEY] }) : '{}',
        VersionId: `v-${id}`,
        VersionStages: id === stale ? ['AWSPREVIOUS'] : ['AWSCURRENT'],
      })),
    });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: stale })
      .resolves({ SecretString: plainKeysText({ now: [DEMO_KEY] }), VersionId: 'v' });

    const result = await cli('list', '--json');

    expect((JSON.parse(result.stdout) as { appId: string }[]).map((app) => app.appId)).toEqual(['now']);
  });

  it('names the shard a batch could not read, in one line', async () => {
    const layout = registry(3);
    secretsManager.on(BatchGetSecretValueCommand).resolves({
      SecretValues: [],
      Errors: [
        {
          SecretId: layout.shardIds[2],
          ErrorCode: 'ResourceNotFoundException',
          Message: "Secrets Manager can't find the specified secret.",
        },
      ],
    });

    const result = await cli('list');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: shard 2: secret ${layout.shardIds[2] ?? ''} not found in region eu-west-1 (or it has no AWSCURRENT version); check AWS_REGION\n`,
    });
  });

  it("add-app writes only the app's home shard, after reading only that shard", async () => {
    const layout = registry(8);
    const home = layout.shardIds[shardOf('shop', 8)] ?? '';

    const result = await cli('add-app', 'shop', '--json');

    expect(result.code).toBe(0);
    expect(
      secretsManager.commandCalls(PutSecretValueCommand).map((call) => call.args[0].input.SecretId),
    ).toEqual([home]);
    expect(
      secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId),
    ).toEqual([MANIFEST, home]);
  });

  it('during a reshard, edits an app not yet moved where it is, and removing it removes its copy in both homes', async () => {
    const appId =
      Array.from({ length: 50 }, (_, i) => `partner-${i}`).find(
        (id) => shardsToSearch({ shards: 8, previousShards: 4 }, id).length === 2,
      ) ?? '';
    const [home = 0, before = 0] = shardsToSearch({ shards: 8, previousShards: 4 }, appId);
    const layout = registry(
      8,
      { [home]: plainKeysText({ [appId]: [PARTNER_KEY] }), [before]: plainKeysText({ [appId]: [DEMO_KEY] }) },
      4,
    );

    const result = await cli('remove-app', appId);

    expect(result).toEqual({
      code: 0,
      stdout: `removed app ${appId} and its keys ${keyIdOf(PARTNER_KEY)}\n`,
      stderr: '',
    });
    const written = secretsManager
      .commandCalls(PutSecretValueCommand)
      .map((call) => [call.args[0].input.SecretId, call.args[0].input.SecretString]);
    // The leftover first: while the home still holds the app, readers never meet its older copy.
    expect(written).toEqual([
      [layout.shardIds[before], '{}'],
      [layout.shardIds[home], '{}'],
    ]);
  });

  it('warns from 80 versions made today, after the write', async () => {
    const layout = registry(8);
    const home = layout.shardIds[shardOf('shop', 8)] ?? '';
    secretsManager.on(ListSecretVersionIdsCommand).resolves({
      Versions: Array.from({ length: 85 }, (_, i) => ({
        VersionId: i === 0 ? `v-${home}` : `old-${i}`,
        VersionStages: i === 0 ? ['AWSCURRENT'] : [],
        CreatedDate: new Date(),
      })),
    });

    const result = await cli('add-app', 'shop');

    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `warning: shard ${shardOf('shop', 8)} (secret ${home}) now holds 86 of the 100 versions Secrets Manager allows ` +
        'within 24 hours (each write adds one; it refuses writes past 100): batch changes into one write per shard ' +
        'with "apply", or space edits out\n',
    );
  });

  it('a stack without a KeyRegistry output is its one keys secret', async () => {
    stackWith('CREATE_COMPLETE', { KeysSecretArn: SHARD_ZERO });
    secretsManager
      .on(GetSecretValueCommand)
      .resolves({ SecretString: plainKeysText({ demo: [DEMO_KEY] }), VersionId: 'v' });

    const result = await cli('where', 'demo');

    expect(result.stdout).toBe(`app demo: home shard 0 of 1 (${SHARD_ZERO}); it is there\n`);
    expect(secretsManager).not.toHaveReceivedCommand(BatchGetSecretValueCommand);
  });

  it('a stack that is no payment-api stack gets one line', async () => {
    stackWith('CREATE_COMPLETE', {});

    expect(await cli('list')).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: stack ${STACK} (CREATE_COMPLETE) has no KeysSecretArn output; is it a payment-api stack, deployed?\n`,
    });
  });
});
