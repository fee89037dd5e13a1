import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { serializeRegistryManifest, shardsToSearch } from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';
import { createSmokeAwsClients, type SmokeAwsClients } from '../../../../tools/smoke/aws-clients';
import { describeStackFailure, readStackTarget } from '../../../../tools/smoke/stack-target';

const cloudFormation = mockClient(CloudFormationClient);
const secretsManager = mockClient(SecretsManagerClient);
const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:keys-AbCdEf';
const STACK = {
  StackName: 'PaymentApi',
  StackStatus: 'CREATE_COMPLETE' as const,
  CreationTime: new Date(0),
  Outputs: [
    { OutputKey: 'PaymentUrl', OutputValue: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod/payment' },
    { OutputKey: 'KeysSecretArn', OutputValue: SECRET_ARN },
  ],
};

let clients: SmokeAwsClients;
beforeEach(() => {
  cloudFormation.reset();
  secretsManager.reset();
  cloudFormation.on(DescribeStacksCommand).resolves({ Stacks: [STACK] });
  clients = createSmokeAwsClients({
    AWS_REGION: 'eu-west-1',
    AWS_ACCESS_KEY_ID: 'a',
    AWS_SECRET_ACCESS_KEY: 'b',
  });
});
afterEach(() => {
  clients.secretsManager.destroy();
  clients.cloudFormation.destroy();
});

const awsError = (name: string, message: string): Error => Object.assign(new Error(message), { name });

describe('readStackTarget', () => {
  it('reads the URL from the stack and the newest plain key from its secret', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({
      SecretString: JSON.stringify({ demo: ['old-key-0123456789abcdef', 'new-key-0123456789abcdef'] }),
    });

    const target = await readStackTarget('PaymentApi', 'demo', clients);

    expect(target).toEqual({
      url: new URL(STACK.Outputs[0]?.OutputValue ?? ''),
      appKey: 'new-key-0123456789abcdef',
      secretArn: SECRET_ARN,
    });
    expect(secretsManager.commandCalls(GetSecretValueCommand)[0]?.args[0].input).toEqual({
      SecretId: SECRET_ARN,
      VersionStage: 'AWSCURRENT',
    });
  });

  it("reads the stack's key prefix from its KeyPrefix output, and ignores one that is no prefix", async () => {
    secretsManager.on(GetSecretValueCommand).resolves({
      SecretString: JSON.stringify({ demo: ['new-key-0123456789abcdef'] }),
    });
    const withPrefix = (value: string) => ({
      Stacks: [{ ...STACK, Outputs: [...STACK.Outputs, { OutputKey: 'KeyPrefix', OutputValue: value }] }],
    });

    cloudFormation
      .on(DescribeStacksCommand)
      .resolvesOnce(withPrefix('acme_live'))
      .resolvesOnce(withPrefix('No!'));
    const [named, garbled] = [
      await readStackTarget('PaymentApi', 'demo', clients),
      await readStackTarget('PaymentApi', 'demo', clients),
    ];

    expect(named.keyPrefix).toBe('acme_live');
    expect(garbled).not.toHaveProperty('keyPrefix');
  });

  it('reports a secret not found in one line, naming the region it looked in', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .rejects(awsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret."));

    await expect(readStackTarget('PaymentApi', 'demo', clients)).rejects.toThrow(
      `secret ${SECRET_ARN} not found in region eu-west-1 (or it has no AWSCURRENT version); check AWS_REGION`,
    );
  });

  it('refuses an app whose every key has expired, in one line that says what to do', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({
      SecretString: JSON.stringify({
        demo: [{ key: 'gone-key-0123456789abcdef', expires: '2020-01-01T00:00:00Z' }],
      }),
    });

    await expect(readStackTarget('PaymentApi', 'demo', clients)).rejects.toThrow(
      `app demo has only expired keys in secret ${SECRET_ARN}; give it a key (npm run keys -- rotate demo)`,
    );
  });

  it('refuses a binary secret', async () => {
    secretsManager.on(GetSecretValueCommand).resolves({ SecretBinary: new Uint8Array([1]) });

    await expect(readStackTarget('PaymentApi', 'demo', clients)).rejects.toThrow(
      `secret ${SECRET_ARN} has no SecretString (binary secrets are not supported)`,
    );
  });
});

describe('readStackTarget on a registry of shards', () => {
  const MANIFEST = 'payment-api/PaymentApi/keys/registry';
  const shardIds = [
    SECRET_ARN,
    ...Array.from({ length: 7 }, (_, i) => `payment-api/PaymentApi/keys/shard-${i + 1}`),
  ];
  const shardedStack = (manifest: object) => {
    cloudFormation.on(DescribeStacksCommand).resolves({
      Stacks: [
        { ...STACK, Outputs: [...STACK.Outputs, { OutputKey: 'KeyRegistry', OutputValue: MANIFEST }] },
      ],
    });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: MANIFEST })
      .resolves({ SecretString: serializeRegistryManifest({ shardIds, ...manifest } as never) });
  };

  it("reads the manifest, then the app's home shard only, and sends its newest key", async () => {
    // Arrange
    shardedStack({ shards: 8 });
    const home = shardIds[shardOf('demo', 8)] ?? '';
    secretsManager
      .on(GetSecretValueCommand, { SecretId: home })
      .resolves({ SecretString: JSON.stringify({ demo: ['home-key-0123456789abcdef'] }) });

    // Act
    const target = await readStackTarget('PaymentApi', 'demo', clients);

    // Assert
    expect(target.appKey).toBe('home-key-0123456789abcdef');
    expect(target.secretArn).toBe(home);
    expect(
      secretsManager.commandCalls(GetSecretValueCommand).map((call) => call.args[0].input.SecretId),
    ).toEqual([MANIFEST, home]);
  });

  it('during a reshard, finds an app not yet moved in its home before, as the Lambda does', async () => {
    // An app whose home differs between 4 and 8 shards.
    const appId =
      ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j']
        .map((c) => `partner-${c}`)
        .find((id) => shardsToSearch({ shards: 8, previousShards: 4 }, id).length === 2) ?? '';
    shardedStack({ shards: 8, previousShards: 4 });
    const [home = 0, before = 0] = shardsToSearch({ shards: 8, previousShards: 4 }, appId);
    secretsManager.on(GetSecretValueCommand, { SecretId: shardIds[home] }).resolves({ SecretString: '{}' });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: shardIds[before] })
      .resolves({ SecretString: JSON.stringify({ [appId]: ['old-home-key-0123456789abcdef'] }) });

    const target = await readStackTarget('PaymentApi', appId, clients);

    expect(target).toMatchObject({ appKey: 'old-home-key-0123456789abcdef', secretArn: shardIds[before] });
  });

  it('says which secrets it looked in when the app is in none', async () => {
    shardedStack({ shards: 8 });
    secretsManager
      .on(GetSecretValueCommand, { SecretId: shardIds[shardOf('ghost', 8)] })
      .resolves({ SecretString: '{}' });

    await expect(readStackTarget('PaymentApi', 'ghost', clients)).rejects.toThrow(
      `app ghost is not in secret ${shardIds[shardOf('ghost', 8)] ?? ''}`,
    );
  });
});

describe('describeStackFailure', () => {
  it.each([
    [
      'a stack that does not exist',
      awsError('ValidationError', 'Stack with id PaymentApi does not exist'),
      'stack PaymentApi not found (check AWS_REGION and the account of the credentials)',
    ],
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566'), { code: 'ECONNREFUSED' }),
      'could not read stack PaymentApi: could not reach CloudFormation at 127.0.0.1:4566 (ECONNREFUSED)',
    ],
    [
      'access denied',
      awsError(
        'AccessDenied',
        'User: arn:aws:iam::123456789012:user/x is not authorized to perform: cloudformation:DescribeStacks',
      ),
      'could not read stack PaymentApi: AccessDenied: User: arn:aws:iam::123456789012:user/x is not authorized to perform: cloudformation:DescribeStacks',
    ],
  ])('describes %s in one line that names CloudFormation', (_label, error, line) => {
    expect(describeStackFailure(error, 'PaymentApi')).toBe(line);
  });
});
