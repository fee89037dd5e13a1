import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  SecretsManagerServiceException,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { SECRET_MAX_BYTES } from '../../../../shared/keys/secret-size';
import {
  createRotationHandler,
  type RotationHandler,
  type RotationHandlerOptions,
} from '../../../../lambda/rotation/create-rotation-handler';
import {
  RotationError,
  ROTATION_STEPS,
  type RotationEvent,
  type RotationStep,
} from '../../../../lambda/rotation/rotation-rules';
import { captureLogs, type CapturedLogs } from '../../../support/capture-logger';
import { keyShape } from '../../../../shared/keys/key-format';

const SECRET_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api-keys-AbCdEf';
const TOKEN = '6a0f8b4e-3c1d-4f2a-9b7e-1d2c3b4a5f60';
const CURRENT_VERSION = '0e1d2c3b-4a59-4687-9a1b-2c3d4e5f6a7b';
const ROTATION_TOKEN = 'rotation-token-from-secrets-manager';

const KEY_A = 'test-handler-key-a-0123456789';
const KEY_P = 'test-handler-key-p-0123456789';
const FRESH_1 = 'test-handler-fresh-1-0123456789';
const FRESH_2 = 'test-handler-fresh-2-0123456789';
const HASHED = toDigestForm('test-handler-hashed-0123456789');
const ALL_KEYS = [KEY_A, KEY_P, FRESH_1, FRESH_2];

const PERIOD_MS = 30 * 86_400_000;
/** The handler's clock. */
const NOW = Date.parse('2026-03-01T12:00:00.250Z');
/** When a key superseded at NOW expires with keep 2: one period after NOW's rotation window opened (midnight). */
const IN_ONE_PERIOD = '2026-03-31T00:00:00Z';

const CURRENT = JSON.stringify({ demo: [KEY_A], partner: KEY_P, hashed: [HASHED] });
/** What createSecret writes for CURRENT at NOW with keep 2 and fresh keys FRESH_1, FRESH_2 (apps in sorted order). */
const PENDING = JSON.stringify({
  demo: [{ key: KEY_A, expires: IN_ONE_PERIOD }, FRESH_1],
  hashed: [HASHED],
  partner: [{ key: KEY_P, expires: IN_ONE_PERIOD }, FRESH_2],
});

/**
 * A valid secret of at least `bytes` bytes (at most one entry more): app demo with one plain key, then apps holding a
 * digest, which rotation leaves alone, so only demo's rotation adds to the size.
 */
function secretOfSize(bytes: number): string {
  const entries: Record<string, unknown> = { demo: [KEY_A] };
  // Counted entry by entry: stringifying the whole secret after each one made this quadratic.
  let size = Buffer.byteLength(JSON.stringify(entries));
  for (let index = 0; size < bytes; index++) {
    const name = `filler-${index}`;
    entries[name] = [HASHED];
    size += Buffer.byteLength(`,${JSON.stringify(name)}:${JSON.stringify([HASHED])}`);
  }
  return JSON.stringify(entries);
}

const secretsManager = mockClient(SecretsManagerClient);

function event(step: RotationStep, extra: Partial<RotationEvent> = {}): RotationEvent {
  return { Step: step, SecretId: SECRET_ARN, ClientRequestToken: TOKEN, ...extra };
}

function describes(stages: Record<string, string[]>, rotationEnabled = true): void {
  secretsManager
    .on(DescribeSecretCommand)
    .resolves({ ARN: SECRET_ARN, RotationEnabled: rotationEnabled, VersionIdsToStages: stages });
}

const ROTATION_UNDER_WAY = { [CURRENT_VERSION]: ['AWSCURRENT'], [TOKEN]: ['AWSPENDING'] };
const ROTATION_DONE = { [CURRENT_VERSION]: ['AWSPREVIOUS'], [TOKEN]: ['AWSCURRENT'] };

function currentIs(secretString: string, versionId = CURRENT_VERSION): void {
  secretsManager
    .on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' })
    .resolves({ ARN: SECRET_ARN, VersionId: versionId, SecretString: secretString });
}

function pendingIs(secretString: string): void {
  secretsManager
    .on(GetSecretValueCommand, { VersionId: TOKEN, VersionStage: 'AWSPENDING' })
    .resolves({ ARN: SECRET_ARN, VersionId: TOKEN, SecretString: secretString });
}

/** Secrets Manager's placeholder for the pending version holds no value until createSecret writes one. */
function pendingIsEmpty(): void {
  secretsManager.on(GetSecretValueCommand, { VersionId: TOKEN, VersionStage: 'AWSPENDING' }).rejects(
    new ResourceNotFoundException({
      message: "Secrets Manager can't find the specified secret value for staging label: AWSPENDING",
      $metadata: {},
    }),
  );
}

function serviceError(name: string, message: string): SecretsManagerServiceException {
  return new SecretsManagerServiceException({ name, $fault: 'client', message, $metadata: {} });
}

/** A rotation under way: the secret labelled for it, its current version, its pending one (none yet if absent). */
function rotationUnderWay(current: string, pending?: string): void {
  describes(ROTATION_UNDER_WAY);
  currentIs(current);
  if (pending === undefined) pendingIsEmpty();
  else pendingIs(pending);
}

describe('the rotation handler', () => {
  let logs: CapturedLogs;
  let handler: RotationHandler;

  beforeEach(() => {
    secretsManager.reset();
    logs = captureLogs();
    const fresh = [FRESH_1, FRESH_2];
    handler = handlerWith({ generateKey: () => fresh.shift() ?? 'test-handler-out-of-fresh-keys' });
  });

  /** A handler at NOW keeping 2 keys a period of PERIOD_MS, logging to this test's lines; `options` change that. */
  function handlerWith(options: Partial<RotationHandlerOptions>): RotationHandler {
    return createRotationHandler({
      client: new SecretsManagerClient({ region: 'eu-west-1' }),
      keep: 2,
      periodMs: PERIOD_MS,
      logger: logs.logger,
      now: () => NOW,
      ...options,
    });
  }

  afterEach(() => {
    for (const key of ALL_KEYS) expect(logs.lines.join('\n')).not.toContain(key);
    expect(logs.lines.join('\n')).not.toContain(ROTATION_TOKEN);
  });

  describe('before any step', () => {
    it.each(ROTATION_STEPS)('%s does nothing when the version is already current', async (step) => {
      describes(ROTATION_DONE);

      await handler(event(step));

      expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 0);
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'the version is already current: nothing to do', step }),
      );
    });

    it.each(ROTATION_STEPS)('%s fails when the version is not labelled AWSPENDING', async (step) => {
      describes({ [CURRENT_VERSION]: ['AWSCURRENT'], [TOKEN]: [] });

      await expect(handler(event(step))).rejects.toThrow(
        `version ${TOKEN} is not labelled AWSPENDING for rotation`,
      );
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 0);
    });

    it('fails on an unknown step without calling Secrets Manager', async () => {
      const unknown = { ...event('createSecret'), Step: 'deleteSecret' } as unknown as RotationEvent;

      await expect(handler(unknown)).rejects.toThrow('unknown rotation step');
      expect(secretsManager).toHaveReceivedCommandTimes(DescribeSecretCommand, 0);
    });

    it('logs a failed step with its step, secret and error, then rethrows', async () => {
      secretsManager.on(DescribeSecretCommand).rejects(serviceError('AccessDeniedException', 'not allowed'));

      await expect(handler(event('testSecret'))).rejects.toThrow('not allowed');
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          level: 'error',
          message: 'rotation step failed',
          step: 'testSecret',
          secretId: SECRET_ARN,
          error: 'AccessDeniedException: not allowed',
        }),
      );
    });

    it('refuses to be created with keep below 2', () => {
      expect(() => handlerWith({ keep: 1 })).toThrow('keep must be a whole number from 2 to 10');
    });
  });

  describe('createSecret', () => {
    it('reads the current version by its stage, writes every app one fresh key as the AWSPENDING version under the token, expiring the previous one a period later and leaving digest apps alone, and logs app counts and the skipped apps', async () => {
      rotationUnderWay(CURRENT);
      secretsManager.on(PutSecretValueCommand).resolves({ VersionId: TOKEN, VersionStages: ['AWSPENDING'] });

      await handler(event('createSecret'));

      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 1);
      expect(secretsManager).toHaveReceivedCommandWith(PutSecretValueCommand, {
        SecretId: SECRET_ARN,
        ClientRequestToken: TOKEN,
        VersionStages: ['AWSPENDING'],
      });
      const input = secretsManager.commandCalls(PutSecretValueCommand)[0]?.args[0].input;
      expect(input?.SecretString).toBe(PENDING);
      // The event has no RotationToken: none is sent.
      expect(input?.RotationToken).toBe(undefined);
      expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, {
        SecretId: SECRET_ARN,
        VersionStage: 'AWSCURRENT',
      });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          message: 'wrote the pending version',
          step: 'createSecret',
          secretArn: SECRET_ARN,
          versionId: TOKEN,
          baseVersionId: CURRENT_VERSION,
          apps: 3,
          rotatedApps: 2,
          skippedApps: 1,
          skippedAppIds: 'hashed',
          expiredApps: 0,
          prunedKeys: 0,
          supersededKeysExpireBy: IN_ONE_PERIOD,
          keep: 2,
          secretBytes: Buffer.byteLength(PENDING),
        }),
      );
    });

    it("makes fresh keys of the key format with the stack's prefix when no key source is given", async () => {
      const prefixed = handlerWith({ keyPrefix: 'acme_live' });
      rotationUnderWay(JSON.stringify({ demo: [KEY_A] }));

      await prefixed(event('createSecret'));

      const written = secretsManager.commandCalls(PutSecretValueCommand)[0]?.args[0].input.SecretString ?? '';
      const fresh = (JSON.parse(written) as { demo: unknown[] }).demo[1];
      expect(typeof fresh === 'string' && keyShape(fresh, 'acme_live')).toBe('prefixed');
    });

    it('removes expired keys and logs them by app and key id, never the key', async () => {
      rotationUnderWay(JSON.stringify({ demo: [{ key: KEY_P, expires: '2026-02-01T00:00:00Z' }, KEY_A] }));

      await handler(event('createSecret'));

      const written = secretsManager.commandCalls(PutSecretValueCommand)[0]?.args[0].input.SecretString ?? '';
      expect(JSON.parse(written)).toEqual({ demo: [{ key: KEY_A, expires: IN_ONE_PERIOD }, FRESH_1] });
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          message: 'wrote the pending version',
          prunedKeys: 1,
          prunedKeyIds: `demo/${keyIdOf(KEY_P)}`,
        }),
      );
    });

    it('fails, writing nothing, when the rotated shard would not fit in Secrets Manager, naming it in one line with by how much and what to do', async () => {
      rotationUnderWay(secretOfSize(SECRET_MAX_BYTES - 20));

      const failure = handler(event('createSecret'));

      await expect(failure).rejects.toThrow(RotationError);
      const message = await failure.then(
        () => '',
        (error: unknown) => (error as Error).message,
      );
      const shard = `shard ${event('createSecret').SecretId} is too full to rotate`;
      expect(message).toMatch(
        /^the rotated secret would be \d+ bytes, \d+ over Secrets Manager's limit of 65536: shard .+ is too full to rotate \(10\d\.\d%\), and nothing was written; remove apps and keys no longer used \(the key CLI's prune removes expired ones\), keep fewer keys per app \(rotationKeep\), store digests \(d:, 24 characters\) rather than plain keys, or grow keyShards \(docs\/keys\.md\)$/,
      );
      expect(message).toContain(shard);
      expect(message).not.toContain('\n');
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
    });

    it('warns from 80% full, with the size, and still writes', async () => {
      rotationUnderWay(secretOfSize(Math.ceil(SECRET_MAX_BYTES * 0.85)));

      await handler(event('createSecret'));

      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 1);
      const warning = logs.entries().find((entry) => entry.message === 'the keys secret is nearly full');
      expect(warning).toMatchObject({ level: 'warn', step: 'createSecret' });
      expect(warning?.fillPercent).toBeGreaterThanOrEqual(85);
    });

    it('passes the RotationToken on when the event has one', async () => {
      rotationUnderWay(CURRENT);

      await handler(event('createSecret', { RotationToken: ROTATION_TOKEN }));

      const input = secretsManager.commandCalls(PutSecretValueCommand)[0]?.args[0].input;
      expect(input?.RotationToken).toBe(ROTATION_TOKEN);
    });

    it('is idempotent: a pending version already written under the token is left as it is', async () => {
      rotationUnderWay(CURRENT, PENDING);

      await handler(event('createSecret'));

      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'the pending version is already written' }),
      );
    });

    it('fails, writing nothing, when the pending version cannot be read for another reason', async () => {
      describes(ROTATION_UNDER_WAY);
      currentIs(CURRENT);
      secretsManager
        .on(GetSecretValueCommand, { VersionId: TOKEN, VersionStage: 'AWSPENDING' })
        .rejects(serviceError('ThrottlingException', 'Rate exceeded'));

      await expect(handler(event('createSecret'))).rejects.toThrow('Rate exceeded');
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
    });

    it('fails, writing nothing, when the current version has an entry the strict model refuses', async () => {
      rotationUnderWay(JSON.stringify({ demo: [KEY_A, 'short'] }));

      await expect(handler(event('createSecret'))).rejects.toThrow(
        "the secret's entry #1, key #2: key length must be 16 to 512 characters",
      );
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
    });

    it('fails on a binary secret', async () => {
      describes(ROTATION_UNDER_WAY);
      secretsManager
        .on(GetSecretValueCommand, { VersionStage: 'AWSCURRENT' })
        .resolves({ VersionId: CURRENT_VERSION, SecretBinary: new Uint8Array([1, 2]) });
      pendingIsEmpty();

      await expect(handler(event('createSecret'))).rejects.toThrow('binary secrets are not supported');
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
    });
  });

  describe('setSecret', () => {
    it('has nothing to set: it only checks the labels', async () => {
      describes(ROTATION_UNDER_WAY);

      await handler(event('setSecret'));

      expect(secretsManager).toHaveReceivedCommandTimes(DescribeSecretCommand, 1);
      expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
      expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 0);
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 0);
    });
  });

  describe('testSecret', () => {
    it('reads the pending version by token and stage, and accepts it when it is one rotation of the current one', async () => {
      rotationUnderWay(CURRENT, PENDING);

      await handler(event('testSecret'));

      expect(logs.entries()).toContainEqual(
        expect.objectContaining({ message: 'the pending version may become current', step: 'testSecret' }),
      );
      expect(secretsManager).toHaveReceivedCommandWith(GetSecretValueCommand, {
        SecretId: SECRET_ARN,
        VersionId: TOKEN,
        VersionStage: 'AWSPENDING',
      });
    });

    it("rejects a pending version that drops the app's current key, moving no label", async () => {
      rotationUnderWay(
        CURRENT,
        JSON.stringify({ demo: [FRESH_1], hashed: [HASHED], partner: [KEY_P, FRESH_2] }),
      );

      await expect(handler(event('testSecret'))).rejects.toThrow(
        'app demo: the pending keys are not one rotation of the current keys',
      );
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 0);
    });

    it("judges the pending version by the step's own clock", async () => {
      rotationUnderWay(CURRENT, PENDING);
      const twoDaysEarlier = handlerWith({ now: () => NOW - 2 * 86_400_000 });

      await expect(twoDaysEarlier(event('testSecret'))).rejects.toThrow(
        `app demo: the pending keys are not one rotation of the current keys (key ${keyIdOf(KEY_A)} expires later than a rotation made now allows)`,
      );
    });
  });

  describe('finishSecret', () => {
    it('moves AWSCURRENT from the version it checked against to the pending one, then removes AWSPENDING', async () => {
      rotationUnderWay(CURRENT, PENDING);

      await handler(event('finishSecret'));

      const moves = secretsManager
        .commandCalls(UpdateSecretVersionStageCommand)
        .map((call) => call.args[0].input);
      expect(moves).toEqual([
        {
          SecretId: SECRET_ARN,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: TOKEN,
          RemoveFromVersionId: CURRENT_VERSION,
        },
        { SecretId: SECRET_ARN, VersionStage: 'AWSPENDING', RemoveFromVersionId: TOKEN },
      ]);
    });

    it('does not move AWSCURRENT when the current version changed since the pending one was made', async () => {
      describes(ROTATION_UNDER_WAY);
      const operatorAddedAKey = JSON.stringify({ demo: [KEY_A, FRESH_2], partner: KEY_P, hashed: [HASHED] });
      currentIs(operatorAddedAKey, 'f1e2d3c4-b5a6-4978-8a9b-0c1d2e3f4a5b');
      pendingIs(PENDING);

      await expect(handler(event('finishSecret'))).rejects.toThrow(
        'app demo: the pending keys are not one rotation of the current keys',
      );
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 0);
    });

    it('fails when AWSCURRENT moved between the check and the move (the move names the checked version)', async () => {
      rotationUnderWay(CURRENT, PENDING);
      secretsManager
        .on(UpdateSecretVersionStageCommand, { VersionStage: 'AWSCURRENT' })
        .rejects(
          serviceError(
            'InvalidParameterException',
            `Version stage AWSCURRENT not found in version ${CURRENT_VERSION}`,
          ),
        );

      await expect(handler(event('finishSecret'))).rejects.toThrow('Version stage AWSCURRENT not found');
      expect(secretsManager).toHaveReceivedCommandTimes(UpdateSecretVersionStageCommand, 1);
    });

    it('still succeeds when AWSPENDING cannot be removed after the move, and says so', async () => {
      rotationUnderWay(CURRENT, PENDING);
      secretsManager
        .on(UpdateSecretVersionStageCommand, { VersionStage: 'AWSPENDING' })
        .rejects(
          serviceError('InvalidParameterException', `Version stage AWSPENDING not found in version ${TOKEN}`),
        );

      await handler(event('finishSecret'));

      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'could not remove the AWSPENDING label from the new current version',
        }),
      );
    });

    it('is idempotent: when already current it only removes an AWSPENDING label left behind', async () => {
      describes({ [CURRENT_VERSION]: ['AWSPREVIOUS'], [TOKEN]: ['AWSCURRENT', 'AWSPENDING'] });

      await handler(event('finishSecret'));

      const moves = secretsManager
        .commandCalls(UpdateSecretVersionStageCommand)
        .map((call) => call.args[0].input);
      expect(moves).toEqual([
        { SecretId: SECRET_ARN, VersionStage: 'AWSPENDING', RemoveFromVersionId: TOKEN },
      ]);
      expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 0);
    });
  });
});
