import {
  GetSecretValueCommand,
  InvalidParameterException,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import 'aws-sdk-client-mock-jest';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { CLI_STAGING_LABEL } from '../../../../tools/keys/secrets-manager-store';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';
import { toCompactDigestForm } from '../../../../shared/keys/key-material';
import { plainKeysText, runCli, storedKeysOf } from '../../../support/keys-cli';

const secretsManager = mockClient(SecretsManagerClient);
const SECRET_ID = 'payment-api-keys';
const READ_VERSION = '11111111-1111-4111-8111-111111111111';
const SEED = plainKeysText({ demo: [DEMO_KEY] });
const ENV = { AWS_REGION: 'eu-west-1', KEYS_SECRET_ID: SECRET_ID };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const serviceError = <T>(
  Type: new (options: { message: string; $metadata: object }) => T,
  message: string,
): T => new Type({ message, $metadata: { httpStatusCode: 400 } });

/** An error as the SDK raises it for a service answer outside the client's model (AccessDeniedException). */
const awsError = (name: string, message: string): Error =>
  Object.assign(new Error(message), { name, $metadata: { httpStatusCode: 400 } });

/** Failures as the SDK and Node raise them. */
const timeoutError = (): Error =>
  Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
const socketError = (code: string, message: string): Error => Object.assign(new Error(message), { code });
const noCredentials = (): Error =>
  Object.assign(new Error('Could not load credentials from any providers'), {
    name: 'CredentialsProviderError',
  });
const NO_CREDENTIALS_LINE =
  'error: no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or use --file for a local key file)';

/** The ClientRequestToken of the first PutSecretValue: the id of the version it stores. */
const putToken = (): string | undefined =>
  secretsManager.commandCalls(PutSecretValueCommand)[0]?.args[0].input.ClientRequestToken;

/** What ListSecretVersionIds answers when AWSCURRENT is on `versionId` and nothing else was written today. */
const versionsWithCurrent = (versionId: string) => ({
  Versions: [{ VersionId: versionId, VersionStages: ['AWSCURRENT'], CreatedDate: new Date() }],
});

/** Instant retries: the back-off is the edit loop's business, tested there. */
const noWait = { retry: { sleep: () => Promise.resolve() } };

beforeEach(() => {
  secretsManager.reset();
  secretsManager.on(GetSecretValueCommand).resolves({ SecretString: SEED, VersionId: READ_VERSION });
  secretsManager
    .on(PutSecretValueCommand)
    .callsFake((input: { ClientRequestToken?: string }) => ({ VersionId: input.ClientRequestToken }));
  secretsManager.on(UpdateSecretVersionStageCommand).resolves({});
  secretsManager.on(ListSecretVersionIdsCommand).resolves(versionsWithCurrent(READ_VERSION));
});

describe('one rotate against Secrets Manager', () => {
  it('makes exactly 5 calls: read AWSCURRENT, list the versions, put with its own label, move AWSCURRENT, drop the label', async () => {
    const result = await runCli(['rotate', 'demo', '--json'], ENV);

    expect(result.code).toBe(0);
    const { key } = JSON.parse(result.stdout) as { key: string };
    const calls = secretsManager.calls().map((call) => call.args[0]);
    expect(calls).toHaveLength(5);
    const [read, versions, put, move, dropPending] = calls;
    expect(read?.input).toEqual({ SecretId: SECRET_ID, VersionStage: 'AWSCURRENT' });
    expect(versions?.input).toEqual({ SecretId: SECRET_ID, IncludeDeprecated: true, MaxResults: 100 });
    const putInput = put?.input as { ClientRequestToken: string; SecretString: string };
    expect(put).toBeInstanceOf(PutSecretValueCommand);
    expect(putInput).toEqual({
      SecretId: SECRET_ID,
      SecretString: expect.any(String) as unknown,
      ClientRequestToken: expect.stringMatching(UUID) as unknown,
      VersionStages: [CLI_STAGING_LABEL],
    });
    expect(storedKeysOf(putInput.SecretString, 'demo')).toEqual([DEMO_KEY, toCompactDigestForm(key)]);
    expect(move?.input).toEqual({
      SecretId: SECRET_ID,
      VersionStage: 'AWSCURRENT',
      MoveToVersionId: putInput.ClientRequestToken,
      RemoveFromVersionId: READ_VERSION,
    });
    expect(dropPending?.input).toEqual({
      SecretId: SECRET_ID,
      VersionStage: CLI_STAGING_LABEL,
      RemoveFromVersionId: putInput.ClientRequestToken,
    });
  });

  it('list makes exactly 1 call', async () => {
    const result = await runCli(['list'], ENV);

    expect(result).toEqual({
      code: 0,
      stdout: `demo: any network; rate limit: the stack's appRateLimit, if set\n  ${keyIdOf(DEMO_KEY)}  never\n`,
      stderr: '',
    });
    expect(secretsManager).toHaveReceivedCommandTimes(GetSecretValueCommand, 1);
    expect(secretsManager.calls()).toHaveLength(1);
  });
});

describe('a conflicting writer', () => {
  it('makes the move fail; one read confirms it, the label is dropped, and the retry succeeds on the newer version', async () => {
    const newerVersion = '22222222-2222-4222-8222-222222222222';
    const newer = plainKeysText({ demo: [DEMO_KEY, PARTNER_KEY] });
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: SEED, VersionId: READ_VERSION })
      .resolves({ SecretString: newer, VersionId: newerVersion });
    secretsManager
      .on(ListSecretVersionIdsCommand)
      .resolvesOnce(versionsWithCurrent(READ_VERSION))
      .resolves(versionsWithCurrent(newerVersion));
    secretsManager
      .on(UpdateSecretVersionStageCommand, { VersionStage: 'AWSCURRENT' })
      .rejectsOnce(
        serviceError(
          InvalidParameterException,
          `Version stage AWSCURRENT not found in version ${READ_VERSION}`,
        ),
      )
      .resolves({});

    const result = await runCli(['rotate', 'demo', '--json'], ENV, noWait);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      'note: the keys changed while this command ran; applied on attempt 2 (the lost race left 1 unused ' +
        `version of secret ${SECRET_ID}, counted toward its version quota for 24 hours)\n`,
    );
    const { key } = JSON.parse(result.stdout) as { key: string };
    expect(secretsManager.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'GetSecretValueCommand',
      'ListSecretVersionIdsCommand',
      'PutSecretValueCommand',
      'UpdateSecretVersionStageCommand',
      'GetSecretValueCommand',
      'UpdateSecretVersionStageCommand',
      'GetSecretValueCommand',
      'ListSecretVersionIdsCommand',
      'PutSecretValueCommand',
      'UpdateSecretVersionStageCommand',
      'UpdateSecretVersionStageCommand',
    ]);
    const puts = secretsManager.commandCalls(PutSecretValueCommand).map((call) => call.args[0].input);
    expect(storedKeysOf(puts[1]?.SecretString, 'demo')).toEqual([
      DEMO_KEY,
      PARTNER_KEY,
      toCompactDigestForm(key),
    ]);
    expect(puts[0]?.ClientRequestToken).not.toBe(puts[1]?.ClientRequestToken);
    expect(secretsManager).toHaveReceivedCommandWith(UpdateSecretVersionStageCommand, {
      VersionStage: CLI_STAGING_LABEL,
      RemoveFromVersionId: puts[0]?.ClientRequestToken,
    });
    expect(secretsManager).toHaveReceivedCommandWith(UpdateSecretVersionStageCommand, {
      VersionStage: 'AWSCURRENT',
      MoveToVersionId: puts[1]?.ClientRequestToken,
      RemoveFromVersionId: newerVersion,
    });
  });
});

describe('a move whose answer was lost', () => {
  it('counts as done when AWSCURRENT turns out to be on our new version', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .resolvesOnce({ SecretString: SEED, VersionId: READ_VERSION })
      .callsFake(() => ({ SecretString: 'whatever landed', VersionId: putToken() }));
    secretsManager
      .on(UpdateSecretVersionStageCommand, { VersionStage: 'AWSCURRENT' })
      .rejects(timeoutError());

    const result = await runCli(['rotate', 'demo', '--json'], ENV);

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(secretsManager).toHaveReceivedCommandTimes(PutSecretValueCommand, 1);
  });
});

describe('failures', () => {
  it.each<[string, boolean, () => string]>([
    ['says the secret is unchanged', false, () => 'AWSCURRENT was not moved, the secret is unchanged'],
    [
      'says so when its label clean-up also fails, and prints the command that clears it',
      true,
      () =>
        `AWSCURRENT was not moved; could not remove the ${CLI_STAGING_LABEL} label from version ${putToken()} of ` +
        `secret ${SECRET_ID} (could not reach Secrets Manager (ECONNRESET)); it keeps that version from being ` +
        `removed until the next edit moves it, or: aws secretsmanager update-secret-version-stage --secret-id ` +
        `'${SECRET_ID}' --version-stage '${CLI_STAGING_LABEL}' --remove-from-version-id '${putToken()}' ` +
        '--region eu-west-1',
    ],
  ])(
    'a refused move fails the command, tries to drop its label, and %s',
    async (_label, cleanupFails, outcome) => {
      secretsManager
        .on(UpdateSecretVersionStageCommand, { VersionStage: 'AWSCURRENT' })
        .rejects(
          awsError(
            'AccessDeniedException',
            'not authorized to perform: secretsmanager:UpdateSecretVersionStage',
          ),
        );
      if (cleanupFails) {
        secretsManager
          .on(UpdateSecretVersionStageCommand, { VersionStage: CLI_STAGING_LABEL })
          .rejects(socketError('ECONNRESET', 'socket hang up'));
      }

      const result = await runCli(['rotate', 'demo'], ENV);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `error: could not move AWSCURRENT of secret ${SECRET_ID} to the new version: access denied: not authorized ` +
          `to perform: secretsmanager:UpdateSecretVersionStage; ${outcome()}\n`,
      });
      expect(secretsManager).toHaveReceivedCommandWith(UpdateSecretVersionStageCommand, {
        VersionStage: CLI_STAGING_LABEL,
      });
    },
  );

  it('a lost label clean-up is a warning; the key was stored and is printed', async () => {
    secretsManager
      .on(UpdateSecretVersionStageCommand, { VersionStage: CLI_STAGING_LABEL })
      .rejects(socketError('ECONNRESET', 'socket hang up'));

    const result = await runCli(['rotate', 'demo', '--json'], ENV);

    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      new RegExp(
        `^warning: could not remove the ${CLI_STAGING_LABEL} label from version ${UUID.source.slice(1, -1)} of secret ` +
          `${SECRET_ID} \\(could not reach Secrets Manager \\(ECONNRESET\\)\\); it keeps that version from being removed ` +
          `until the next edit moves it, or: aws secretsmanager update-secret-version-stage --secret-id '${SECRET_ID}' ` +
          `--version-stage '${CLI_STAGING_LABEL}' ` +
          `--remove-from-version-id '${UUID.source.slice(1, -1)}' --region eu-west-1\\n$`,
      ),
    );
  });

  it.each<[string, Error, string]>([
    [
      'a refused put',
      awsError('AccessDeniedException', 'no PutSecretValue'),
      'access denied: no PutSecretValue',
    ],
    ['a put whose answer timed out', timeoutError(), 'Secrets Manager did not answer in time'],
    [
      'a put whose connection dropped',
      socketError('ECONNRESET', 'socket hang up'),
      'could not reach Secrets Manager (ECONNRESET)',
    ],
  ])(
    '%s fails the command, says nothing changed, and takes its label off the version it may have stored',
    async (_label, failure, description) => {
      secretsManager.on(PutSecretValueCommand).rejects(failure);
      secretsManager
        .on(UpdateSecretVersionStageCommand)
        .rejects(
          serviceError(InvalidParameterException, `Version stage ${CLI_STAGING_LABEL} not found in version`),
        );

      const result = await runCli(['add-app', 'shop'], ENV);

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `error: could not write a new version of secret ${SECRET_ID}: ${description}; ` +
          'nothing was changed (AWSCURRENT untouched)\n',
      });
      expect(
        secretsManager.commandCalls(UpdateSecretVersionStageCommand).map((call) => call.args[0].input),
      ).toEqual([{ SecretId: SECRET_ID, VersionStage: CLI_STAGING_LABEL, RemoveFromVersionId: putToken() }]);
    },
  );

  it.each<[string, Error, () => string]>([
    [
      'a clean-up that finds no such version is taken as done',
      serviceError(ResourceNotFoundException, "Secrets Manager can't find the version"),
      () => '',
    ],
    [
      'a failed clean-up is named in the same line with the version to fix',
      socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:4566'),
      () =>
        `; if the new version ${putToken()} was stored after all, its ${CLI_STAGING_LABEL} label could not be ` +
        'removed (could not reach Secrets Manager at 127.0.0.1:4566 (ECONNREFUSED)); to remove it: aws ' +
        `secretsmanager update-secret-version-stage --secret-id '${SECRET_ID}' --version-stage ` +
        `'${CLI_STAGING_LABEL}' --remove-from-version-id '${putToken()}' --region eu-west-1`,
    ],
  ])('after a failed put, %s', async (_label, cleanUpFailure, cleanUpProblem) => {
    secretsManager.on(PutSecretValueCommand).rejects(awsError('TimeoutError', 'timed out'));
    secretsManager.on(UpdateSecretVersionStageCommand).rejects(cleanUpFailure);

    const result = await runCli(['rotate', 'demo'], ENV);

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: could not write a new version of secret ${SECRET_ID}: Secrets Manager did not answer in time; ` +
        `nothing was changed (AWSCURRENT untouched)${cleanUpProblem()}\n`,
    });
  });

  it('a put that fails for want of credentials never reached Secrets Manager: no clean-up is tried', async () => {
    secretsManager.on(PutSecretValueCommand).rejects(noCredentials());

    const result = await runCli(['rotate', 'demo'], ENV);

    expect(result.stderr).toBe(`${NO_CREDENTIALS_LINE}\n`);
    expect(secretsManager).not.toHaveReceivedCommand(UpdateSecretVersionStageCommand);
  });

  it.each<[string, unknown, string]>([
    [
      'a missing secret',
      serviceError(ResourceNotFoundException, "Secrets Manager can't find the specified secret."),
      `error: secret ${SECRET_ID} not found in region eu-west-1 (or it has no AWSCURRENT version); check AWS_REGION`,
    ],
    ['no credentials', noCredentials(), NO_CREDENTIALS_LINE],
    [
      'a refused connection',
      socketError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:4566'),
      `error: could not read secret ${SECRET_ID}: could not reach Secrets Manager at 127.0.0.1:4566 in region eu-west-1 (ECONNREFUSED)`,
    ],
  ])('%s while reading: one clear line, exit 1, nothing written', async (_label, failure, line) => {
    secretsManager.on(GetSecretValueCommand).rejects(failure as Error);

    const result = await runCli(['rotate', 'demo'], ENV);

    expect(result).toEqual({ code: 1, stdout: '', stderr: `${line}\n` });
    expect(secretsManager).not.toHaveReceivedCommand(PutSecretValueCommand);
  });

  it('refuses a binary secret', async () => {
    secretsManager
      .on(GetSecretValueCommand)
      .resolves({ SecretBinary: new Uint8Array([1]), VersionId: READ_VERSION });

    const result = await runCli(['list'], ENV);

    expect(result.stderr).toBe(
      `error: secret ${SECRET_ID} has no SecretString (binary secrets are not supported)\n`,
    );
  });
});
