import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  RotateSecretCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { authenticate } from '../../../shared/keys/authenticate';
import { parseKeyDocument } from '../../../shared/keys/key-document';
import { GENERATED_KEY_PREFIX, toDigestForm } from '../../../shared/keys/key-material';
import { parseKeyring, type Keyring } from '../../../shared/keys/keyring';
import { secretsManagerSource } from '../../../lambda/payment/secrets-manager-source';
import { createRotationHandler } from '../../../lambda/rotation/create-rotation-handler';
import { ROTATION_STEPS, type RotationEvent } from '../../../lambda/rotation/rotation-rules';
import { captureLogs, type CapturedLogs } from '../../support/capture-logger';
import { MOTO_AWS_ENV, startMoto, type MotoServer } from '../../support/moto';

const KEY_A = 'test-moto-rotation-demo-key-a-0123456789';
const KEY_P = 'test-moto-rotation-partner-key-0123456789';
const HASHED = toDigestForm('test-moto-rotation-hashed-key-0123456789');
const INITIAL = JSON.stringify({ demo: [KEY_A], partner: KEY_P, hashed: [HASHED] });

/**
 * moto cannot invoke a rotation Lambda it does not host, but RotateSecret still does what Secrets Manager does
 * before it invokes one: it turns rotation on and attaches AWSPENDING to an empty version named by the token.
 * The call then fails on the unknown function, and the test plays Secrets Manager's part by invoking the four
 * steps itself.
 */
const UNHOSTED_FUNCTION_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:payment-api-rotation';

describe('scheduled rotation against the Secrets Manager API (moto)', () => {
  let moto: MotoServer;
  let client: SecretsManagerClient;
  let logs: CapturedLogs;

  beforeAll(async () => {
    moto = await startMoto();
    client = new SecretsManagerClient({
      region: MOTO_AWS_ENV.AWS_REGION,
      endpoint: moto.endpoint,
      credentials: {
        accessKeyId: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
        secretAccessKey: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
      },
    });
  });

  afterAll(async () => {
    client.destroy();
    await moto.stop();
  });

  beforeEach(() => {
    logs = captureLogs();
  });

  async function createKeysSecret(): Promise<string> {
    const output = await client.send(
      new CreateSecretCommand({ Name: `payment-api-keys-${randomUUID()}`, SecretString: INITIAL }),
    );
    if (output.ARN === undefined) throw new Error('CreateSecret returned no ARN');
    return output.ARN;
  }

  async function stagesOf(secretArn: string): Promise<Record<string, string[]>> {
    const output = await client.send(new DescribeSecretCommand({ SecretId: secretArn }));
    return output.VersionIdsToStages ?? {};
  }

  /** What Secrets Manager does when a rotation starts, as far as moto does it; checked, not assumed. */
  async function beginRotation(secretArn: string, token: string, rotateImmediately = true): Promise<void> {
    await expect(
      client.send(
        new RotateSecretCommand({
          SecretId: secretArn,
          ClientRequestToken: token,
          RotationLambdaARN: UNHOSTED_FUNCTION_ARN,
          RotationRules: { AutomaticallyAfterDays: 30 },
          RotateImmediately: rotateImmediately,
        }),
      ),
    ).rejects.toThrow(ResourceNotFoundException);
    const description = await client.send(new DescribeSecretCommand({ SecretId: secretArn }));
    expect(description.RotationEnabled).toBe(true);
    expect(description.VersionIdsToStages?.[token]).toEqual(['AWSPENDING']);
  }

  async function runSteps(secretArn: string, token: string, keep = 2): Promise<void> {
    const handler = createRotationHandler({ client, keep, logger: logs.logger });
    for (const step of ROTATION_STEPS) {
      const event: RotationEvent = { Step: step, SecretId: secretArn, ClientRequestToken: token };
      await handler(event);
    }
  }

  async function rotate(secretArn: string, keep = 2): Promise<string> {
    const token = randomUUID();
    await beginRotation(secretArn, token);
    await runSteps(secretArn, token, keep);
    return token;
  }

  async function readCurrent(
    secretArn: string,
  ): Promise<{ versionId: string | undefined; secretString: string }> {
    const output = await client.send(
      new GetSecretValueCommand({ SecretId: secretArn, VersionStage: 'AWSCURRENT' }),
    );
    return { versionId: output.VersionId, secretString: output.SecretString ?? '' };
  }

  /** The keyring exactly as the payment Lambda reads it. */
  async function serviceKeyring(secretArn: string): Promise<Keyring> {
    const parsed = parseKeyring(await secretsManagerSource(secretArn, client).fetchSecretString());
    expect(parsed.problems).toEqual([]);
    return parsed.keyring;
  }

  function keysOf(secretString: string, appId: string): readonly string[] {
    return parseKeyDocument(secretString).get(appId) ?? [];
  }

  it('gives every app a fresh key, keeps the previous one valid, and leaves digest apps alone', async () => {
    const secretArn = await createKeysSecret();
    const initialVersion = (await readCurrent(secretArn)).versionId ?? '';

    const token = await rotate(secretArn);

    const current = await readCurrent(secretArn);
    expect(current.versionId).toBe(token);
    const demo = keysOf(current.secretString, 'demo');
    const partner = keysOf(current.secretString, 'partner');
    expect(demo).toEqual([
      KEY_A,
      expect.stringMatching(new RegExp(`^${GENERATED_KEY_PREFIX}[A-Za-z0-9_-]{43}$`)),
    ]);
    expect(partner).toEqual([KEY_P, expect.stringMatching(new RegExp(`^${GENERATED_KEY_PREFIX}`))]);
    expect(keysOf(current.secretString, 'hashed')).toEqual([HASHED]);
    expect(demo[1]).not.toBe(partner[1]);

    const keyring = await serviceKeyring(secretArn);
    for (const appKey of [KEY_A, demo[1] ?? '']) {
      expect(authenticate({ appId: 'demo', appKey }, keyring)).toMatchObject({ ok: true, appId: 'demo' });
    }
    expect(await stagesOf(secretArn)).toEqual({ [initialVersion]: ['AWSPREVIOUS'], [token]: ['AWSCURRENT'] });
  });

  it('is idempotent: the same four steps again with the same token change nothing', async () => {
    const secretArn = await createKeysSecret();
    const token = await rotate(secretArn);
    const stagesAfterFirstRun = await stagesOf(secretArn);
    const valueAfterFirstRun = await readCurrent(secretArn);

    await runSteps(secretArn, token);

    expect(await stagesOf(secretArn)).toEqual(stagesAfterFirstRun);
    expect(await readCurrent(secretArn)).toEqual(valueAfterFirstRun);
  });

  it('is idempotent step by step: each step run twice before the next still rotates once', async () => {
    const secretArn = await createKeysSecret();
    const token = randomUUID();
    await beginRotation(secretArn, token);
    const handler = createRotationHandler({ client, keep: 2, logger: logs.logger });
    const readPending = async (): Promise<string | undefined> =>
      (
        await client.send(
          new GetSecretValueCommand({ SecretId: secretArn, VersionId: token, VersionStage: 'AWSPENDING' }),
        )
      ).SecretString;
    const pendingAfterEachCreate: (string | undefined)[] = [];

    for (const step of ROTATION_STEPS) {
      for (let run = 0; run < 2; run++) {
        await handler({ Step: step, SecretId: secretArn, ClientRequestToken: token });
        if (step === 'createSecret') pendingAfterEachCreate.push(await readPending());
      }
    }

    expect(pendingAfterEachCreate[1]).toBe(pendingAfterEachCreate[0]);
    const current = await readCurrent(secretArn);
    expect(current).toEqual({ versionId: token, secretString: pendingAfterEachCreate[0] });
    expect(keysOf(current.secretString, 'demo')).toEqual([KEY_A, expect.stringMatching(/^payk_/)]);
    expect(Object.keys(await stagesOf(secretArn))).toHaveLength(2);
  });

  it('drops the oldest key on the next rotation with keep 2, keeping the two newest', async () => {
    const secretArn = await createKeysSecret();
    await rotate(secretArn);
    const firstFresh = keysOf((await readCurrent(secretArn)).secretString, 'demo')[1] ?? '';

    await rotate(secretArn);

    const demo = keysOf((await readCurrent(secretArn)).secretString, 'demo');
    expect(demo).toEqual([firstFresh, expect.stringMatching(/^payk_/)]);
    expect(demo[1]).not.toBe(firstFresh);
    const keyring = await serviceKeyring(secretArn);
    expect(authenticate({ appId: 'demo', appKey: KEY_A }, keyring)).toEqual({
      ok: false,
      reason: 'wrong_key',
    });
    for (const appKey of demo) {
      expect(authenticate({ appId: 'demo', appKey }, keyring)).toMatchObject({ ok: true });
    }
    expect(keysOf((await readCurrent(secretArn)).secretString, 'hashed')).toEqual([HASHED]);
  });

  it('leaves no AWSPENDING label behind, so the next rotation can start', async () => {
    const secretArn = await createKeysSecret();

    await rotate(secretArn);
    await rotate(secretArn);

    const pending = Object.entries(await stagesOf(secretArn)).filter(([, stages]) =>
      stages.includes('AWSPENDING'),
    );
    expect(pending).toEqual([]);
  });

  it('does not move AWSCURRENT over a version an operator wrote during the rotation', async () => {
    const secretArn = await createKeysSecret();
    const token = randomUUID();
    await beginRotation(secretArn, token);
    const handler = createRotationHandler({ client, keep: 2, logger: logs.logger });
    await handler({ Step: 'createSecret', SecretId: secretArn, ClientRequestToken: token });
    const operatorKey = 'test-moto-rotation-operator-key-0123456789';
    const operatorValue = JSON.stringify({ demo: [KEY_A, operatorKey], partner: KEY_P, hashed: [HASHED] });
    const operatorWrite = await client.send(
      new PutSecretValueCommand({
        SecretId: secretArn,
        SecretString: operatorValue,
        ClientRequestToken: randomUUID(),
      }),
    );

    await expect(
      handler({ Step: 'finishSecret', SecretId: secretArn, ClientRequestToken: token }),
    ).rejects.toThrow('app demo: the pending keys are not one rotation of the current keys');

    expect(await readCurrent(secretArn)).toEqual({
      versionId: operatorWrite.VersionId,
      secretString: operatorValue,
    });
  });

  it('passes the configuration test Secrets Manager runs when rotation is set up without rotating', async () => {
    const secretArn = await createKeysSecret();
    const token = randomUUID();
    await beginRotation(secretArn, token, false);
    const handler = createRotationHandler({ client, keep: 2, logger: logs.logger });

    await handler({ Step: 'testSecret', SecretId: secretArn, ClientRequestToken: token });

    expect((await readCurrent(secretArn)).secretString).toBe(INITIAL);
  });

  afterEach(() => {
    const written = logs.lines.join('\n');
    expect(written).not.toContain(KEY_A);
    expect(written).not.toContain(KEY_P);
    expect(written).not.toMatch(/payk_[A-Za-z0-9_-]{43}/);
  });
});
