import {
  BatchGetSecretValueCommand,
  SecretsManagerClient,
  type BatchGetSecretValueCommandInput,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { namesSecret, readShards } from '../../../lambda/read-shards';
import { ERROR_TEXT_MAX_CHARS } from '../../../shared/logger';

const ARN_PREFIX = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:';
const secretsManager = mockClient(SecretsManagerClient);

/** The names of shards 1 to count - 1 and a complete ARN for shard 0, as a layout names them. */
function shardIds(count: number): string[] {
  return Array.from({ length: count }, (_, index) =>
    index === 0 ? `${ARN_PREFIX}keys-AbCdEf` : `payment-api/Test/keys/shard-${index}`,
  );
}

describe('readShards', () => {
  beforeEach(() => {
    secretsManager.reset();
  });

  it('reads 45 shards in 3 calls of at most 20, each shard once, and returns every value with its shard and version', async () => {
    // Arrange
    const ids = shardIds(45);
    secretsManager.on(BatchGetSecretValueCommand).callsFake((input: BatchGetSecretValueCommandInput) => ({
      SecretValues: (input.SecretIdList ?? []).map((id) => ({
        ARN: id.startsWith('arn:') ? id : `${ARN_PREFIX}${id}-AbCdEf`,
        Name: id.startsWith('arn:') ? 'keys' : id,
        SecretString: `{"at":${ids.indexOf(id)}}`,
        VersionId: `version-${ids.indexOf(id)}`,
      })),
    }));
    const client = new SecretsManagerClient({ region: 'eu-west-1' });

    // Act
    const { reads, calls } = await readShards(client, ids, 4);

    // Assert
    expect(calls).toBe(3);
    expect(secretsManager).toHaveReceivedCommandTimes(BatchGetSecretValueCommand, 3);
    const asked = secretsManager
      .commandCalls(BatchGetSecretValueCommand)
      .map((call) => call.args[0].input.SecretIdList);
    expect(asked).toEqual([ids.slice(0, 20), ids.slice(20, 40), ids.slice(40)]);
    expect(reads).toEqual(
      ids.map((_, shard) => ({
        shard,
        ok: true,
        secretString: `{"at":${shard}}`,
        versionId: `version-${shard}`,
      })),
    );
  });

  it('matches each value to its shard by name, complete ARN or partial ARN, whatever order they come in', async () => {
    // Arrange: shard 0 known by a partial ARN (a secret given by name), the others by name.
    const ids = [
      `${ARN_PREFIX}payment-api/keys`,
      'payment-api/Test/keys/shard-1',
      'payment-api/Test/keys/shard-2',
    ];
    secretsManager.on(BatchGetSecretValueCommand).resolves({
      SecretValues: [
        {
          ARN: `${ARN_PREFIX}payment-api/Test/keys/shard-2-AbCdEf`,
          Name: 'payment-api/Test/keys/shard-2',
          SecretString: '{"s":2}',
        },
        { ARN: `${ARN_PREFIX}payment-api/keys-QwErTy`, Name: 'payment-api/keys', SecretString: '{"s":0}' },
        {
          ARN: `${ARN_PREFIX}payment-api/Test/keys/shard-1-ZxCvBn`,
          Name: 'payment-api/Test/keys/shard-1',
          SecretString: '{"s":1}',
        },
      ],
    });

    // Act
    const { reads } = await readShards(new SecretsManagerClient({ region: 'eu-west-1' }), ids, 4);

    // Assert
    expect(reads.map((read) => (read.ok ? read.secretString : read.problem))).toEqual([
      '{"s":0}',
      '{"s":1}',
      '{"s":2}',
    ]);
  });

  it('reports a shard Secrets Manager refused, one it returned nothing for, and a binary one, each by itself', async () => {
    // Arrange
    const ids = shardIds(4);
    secretsManager.on(BatchGetSecretValueCommand).resolves({
      SecretValues: [
        { ARN: ids[0], Name: 'keys', SecretString: '{}' },
        { ARN: `${ARN_PREFIX}${ids[3] ?? ''}-AbCdEf`, Name: ids[3], SecretBinary: new Uint8Array([1, 2]) },
      ],
      Errors: [
        {
          SecretId: ids[1],
          ErrorCode: 'ResourceNotFoundException',
          Message: "Secrets Manager can't find the specified secret.",
        },
      ],
    });

    // Act
    const { reads } = await readShards(new SecretsManagerClient({ region: 'eu-west-1' }), ids, 4);

    // Assert
    expect(reads).toEqual([
      { shard: 0, ok: true, secretString: '{}' },
      {
        shard: 1,
        ok: false,
        problem: "ResourceNotFoundException: Secrets Manager can't find the specified secret.",
      },
      { shard: 2, ok: false, problem: 'Secrets Manager returned neither its value nor an error for it' },
      { shard: 3, ok: false, problem: 'the secret holds no SecretString (binary secrets are not supported)' },
    ]);
  });

  it("cuts the service's text for a refused shard to 256 characters, as every error text in a log line is", async () => {
    // Arrange: an error message as long as an HTML page a proxy might answer.
    const ids = shardIds(1);
    secretsManager.on(BatchGetSecretValueCommand).resolves({
      Errors: [
        { SecretId: ids[0], ErrorCode: 'InternalServiceError', Message: `<html>${'x'.repeat(900_000)}` },
      ],
    });

    // Act
    const { reads } = await readShards(new SecretsManagerClient({ region: 'eu-west-1' }), ids, 4);

    // Assert
    const [read] = reads;
    expect(read?.ok).toBe(false);
    const problem = read?.ok === false ? read.problem : '';
    expect(problem).toHaveLength(ERROR_TEXT_MAX_CHARS);
    expect(problem).toMatch(/^InternalServiceError: <html>x+\.\.\.$/);
  });

  it('marks the shards of a failed call unreadable and still reads the others', async () => {
    // Arrange: the second of three calls is refused.
    const ids = shardIds(45);
    let call = 0;
    secretsManager.on(BatchGetSecretValueCommand).callsFake((input: BatchGetSecretValueCommandInput) => {
      call += 1;
      if (call === 2) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      return {
        SecretValues: (input.SecretIdList ?? []).map((id) => ({
          ARN: id.startsWith('arn:') ? id : `${ARN_PREFIX}${id}-AbCdEf`,
          Name: id,
          SecretString: '{}',
        })),
      };
    });

    // Act
    const { reads, calls } = await readShards(
      new SecretsManagerClient({ region: 'eu-west-1', maxAttempts: 1 }),
      ids,
      1,
    );

    // Assert
    expect(calls).toBe(3);
    expect(reads.filter((read) => !read.ok).map((read) => read.shard)).toEqual(
      Array.from({ length: 20 }, (_, index) => 20 + index),
    );
    expect(reads[25]).toEqual({
      shard: 25,
      ok: false,
      problem: 'BatchGetSecretValue failed: ThrottlingException: Rate exceeded',
    });
  });

  it('keeps at most `concurrency` calls in flight', async () => {
    // Arrange: 9 calls (180 shards), each held until the test lets it go.
    const ids = shardIds(180);
    let inFlight = 0;
    let most = 0;
    secretsManager
      .on(BatchGetSecretValueCommand)
      .callsFake(async (input: BatchGetSecretValueCommandInput) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return {
          SecretValues: (input.SecretIdList ?? []).map((id) => ({
            Name: id,
            ARN: `${ARN_PREFIX}${id}`,
            SecretString: '{}',
          })),
        };
      });

    // Act
    const { calls } = await readShards(new SecretsManagerClient({ region: 'eu-west-1' }), ids, 4);

    // Assert
    expect(calls).toBe(9);
    expect(most).toBe(4);
  });
});

describe('namesSecret', () => {
  const entry = { ARN: `${ARN_PREFIX}payment-api/keys-AbCdEf`, Name: 'payment-api/keys' };

  it.each([
    ['its name', 'payment-api/keys', true],
    ['its complete ARN', `${ARN_PREFIX}payment-api/keys-AbCdEf`, true],
    ['its partial ARN', `${ARN_PREFIX}payment-api/keys`, true],
    ['the partial ARN of a name it only starts with', `${ARN_PREFIX}payment-api/ke`, false],
    ['the partial ARN of a longer name', `${ARN_PREFIX}payment-api`, false],
    ['another name', 'payment-api/keys-2', false],
  ])('takes %s for the secret: %s', (_case, id, expected) => {
    expect(namesSecret(id, entry)).toBe(expected);
  });
});
