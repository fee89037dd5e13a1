import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateSecretCommand,
  DeleteSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretsCommand,
  ListSecretVersionIdsCommand,
  type SecretsManagerClient,
  type ServiceInputTypes,
  type ServiceOutputTypes,
} from '@aws-sdk/client-secrets-manager';
import type { InitializeMiddleware } from '@smithy/types';
import type { CallBounds } from '../../../shared/aws/bounded-client';
import { createOperatorSecretsManagerClient } from '../../../tools/common/aws-clients';
import type { CliIo } from '../../../tools/keys/main';
import { CLI_STAGING_LABEL } from '../../../tools/keys/secrets-manager-store';
import { keyIdOf } from '../../../shared/keys/key-document';
import { parseKeyring } from '../../../shared/keys/keyring';
import { EMULATOR_CALL_BOUNDS, startMoto, type MotoServer } from '../../support/moto';
import {
  digestKeyIdOf,
  decide,
  GENERATED_KEY_PATTERN,
  runCli as runCliWithBounds,
  spawnCli,
  type CliResult,
} from '../../support/keys-cli';
import { ownStderrLines } from '../../support/tool-process';

type Env = Readonly<Record<string, string | undefined>>;

let moto: MotoServer;
let admin: SecretsManagerClient;

/** The CLI's own client, with bounds for moto on a busy machine (or those given) rather than the operator's. */
function cliClient(env: Env, bounds: CallBounds = EMULATOR_CALL_BOUNDS): SecretsManagerClient {
  return createOperatorSecretsManagerClient(env, bounds);
}

/** The CLI's client with `middleware` first in every call: a race or a fault played at one step of a write. */
function clientWith(
  name: string,
  middleware: InitializeMiddleware<ServiceInputTypes, ServiceOutputTypes>,
): (env: Env) => SecretsManagerClient {
  return (env) => {
    const client = cliClient(env);
    client.middlewareStack.add(middleware, { step: 'initialize', name });
    return client;
  };
}

/** The CLI in-process, its AWS calls bounded for moto on a busy machine. */
function runCli(argv: readonly string[], env: Env, extra: Omit<CliIo, 'stdout' | 'stderr' | 'env'> = {}) {
  return runCliWithBounds(argv, env, { awsCallBounds: EMULATOR_CALL_BOUNDS, ...extra });
}

beforeAll(async () => {
  moto = await startMoto();
  admin = cliClient(moto.awsEnv);
  // moto loads Secrets Manager on its first call: done here, so no test's call waits on it.
  await admin.send(new ListSecretsCommand({}));
});

afterAll(async () => {
  admin.destroy();
  await moto.stop();
});

/** The one key the secrets below start with, for app demo. */
const ORIGINAL_KEY = 'test-demo-key-0123456789abcdef';
const ORIGINAL = JSON.stringify({ demo: [ORIGINAL_KEY] });

/** SDK retries reuse the create's ClientRequestToken, which Secrets Manager (and moto) take as the same create. */
async function createSecret(value = ORIGINAL): Promise<string> {
  const name = `payment-api-keys-${randomUUID()}`;
  await admin.send(new CreateSecretCommand({ Name: name, SecretString: value }));
  return name;
}

async function current(secretId: string): Promise<{ text: string; versionId: string }> {
  const output = await admin.send(
    new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
  );
  return { text: output.SecretString ?? '', versionId: output.VersionId ?? '' };
}

async function accepts(secretId: string, appId: string, appKey: string): Promise<boolean> {
  return decide((await current(secretId)).text, appId, appKey).ok;
}

async function stagesOf(secretId: string): Promise<string[]> {
  const { VersionIdsToStages = {} } = await admin.send(new DescribeSecretCommand({ SecretId: secretId }));
  return Object.values(VersionIdsToStages).flat().sort();
}

const keyOf = (result: CliResult): string => (JSON.parse(result.stdout) as { key: string }).key;

describe('the key CLI against the Secrets Manager API (moto)', () => {
  it('add-app, rotate and revoke round trip through AWSCURRENT, leaving no AWSPENDING behind', async () => {
    const secretId = await createSecret('{}');
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);

    const added = await keys('add-app', 'demo', '--json');
    const rotated = await keys('rotate', 'demo', '--json');
    const [first, second] = [keyOf(added), keyOf(rotated)];

    expect([added.code, rotated.code]).toEqual([0, 0]);
    expect([await accepts(secretId, 'demo', first), await accepts(secretId, 'demo', second)]).toEqual([
      true,
      true,
    ]);
    expect(parseKeyring((await current(secretId)).text).problems).toEqual([]);
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT', 'AWSPREVIOUS']);

    const revoked = await keys('revoke', 'demo', digestKeyIdOf(first));
    expect(revoked.code).toBe(0);
    expect([await accepts(secretId, 'demo', first), await accepts(secretId, 'demo', second)]).toEqual([
      false,
      true,
    ]);
    for (const result of [added, rotated]) expect(result.stderr).toBe('');
  });

  it('runs as a real process with `npx tsx bin/keys.ts`', async () => {
    const secretId = await createSecret();

    const result = await spawnCli(['rotate', 'demo', '--json', '--secret-id', secretId], moto.awsEnv, 'npx');

    expect(result.code).toBe(0);
    expect(ownStderrLines(result.stderr)).toEqual([]);
    expect(keyOf(result)).toMatch(GENERATED_KEY_PATTERN);
    expect(await accepts(secretId, 'demo', keyOf(result))).toBe(true);
  });

  it('keeps every key that concurrent rotate processes reported as created', async () => {
    const secretId = await createSecret();
    const processes = 8;

    const results = await Promise.all(
      Array.from({ length: processes }, () =>
        spawnCli(['rotate', 'demo', '--json', '--secret-id', secretId], moto.awsEnv),
      ),
    );

    const succeeded = results.filter((result) => result.code === 0);
    const failed = results.filter((result) => result.code !== 0);
    const text = (await current(secretId)).text;
    const { keyring, problems } = parseKeyring(text);
    expect(problems).toEqual([]);
    for (const result of succeeded) {
      expect(decide(text, 'demo', keyOf(result)).ok).toBe(true);
    }
    for (const result of failed) {
      expect(result.stdout).toBe('');
      expect(ownStderrLines(result.stderr)).toEqual([expect.stringMatching(/^error: /) as unknown]);
    }
    expect(decide(text, 'demo', ORIGINAL_KEY).ok).toBe(true);
    expect(keyring.get('demo')?.keys).toHaveLength(1 + succeeded.length);
    expect(await stagesOf(secretId)).not.toContain('AWSPENDING');

    const attempts = succeeded.map((result) =>
      Number(/applied on attempt (\d+)/.exec(result.stderr)?.[1] ?? 1),
    );
    if (process.env.KEYS_CLI_REPORT) {
      console.log(
        JSON.stringify({ processes, succeeded: succeeded.length, failed: failed.length, attempts }),
      );
    }
    expect(succeeded.length).toBeGreaterThan(0);
  });

  it("tells the losers of a race, given no retries, that nothing was stored, and keeps the winner's key", async () => {
    const secretId = await createSecret();
    const writers = 6;
    // Every writer's PutSecretValue waits until all have read, so all edits start from the same version.
    let reads = 0;
    let allRead: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => (allRead = resolve));
    const readThenWait = clientWith('allReadBeforeAnyWrite', (next, context) => async (args) => {
      if (context.commandName === 'PutSecretValueCommand') await barrier;
      const output = await next(args);
      if (context.commandName === 'GetSecretValueCommand' && ++reads === writers) allRead();
      return output;
    });

    const results = await Promise.all(
      Array.from({ length: writers }, () =>
        runCli(['rotate', 'demo', '--json', '--secret-id', secretId], moto.awsEnv, {
          createSecretsManagerClient: readThenWait,
          retry: { maxAttempts: 1 },
        }),
      ),
    );

    const [winner = { code: -1, stdout: '', stderr: '' }, ...losers] = [...results].sort(
      (a, b) => a.code - b.code,
    );
    expect(winner.code).toBe(0);
    expect(losers).toEqual(
      Array.from({ length: writers - 1 }, () => ({
        code: 1,
        stdout: '',
        stderr:
          'error: the keys changed under us 1 time; nothing was lost, re-run the command (the lost race left 1 ' +
          `unused version of secret ${secretId}, counted toward its version quota for 24 hours)\n`,
      })),
    );
    const { keyring } = parseKeyring((await current(secretId)).text);
    expect(keyring.get('demo')?.keys.map((key) => key.id)).toEqual([
      keyIdOf(ORIGINAL_KEY),
      digestKeyIdOf(keyOf(winner)),
    ]);
    expect(await stagesOf(secretId)).not.toContain('AWSPENDING');
  });

  it('a writer whose race is already lost when it lists the versions writes nothing, so leaves no unused version', async () => {
    const secretId = await createSecret();
    const writers = 4;
    // All read the same version; every writer but the first lists the versions only once the first has moved
    // AWSCURRENT.
    let reads = 0;
    let allRead: () => void = () => undefined;
    const readBarrier = new Promise<void>((resolve) => (allRead = resolve));
    let firstMoved: () => void = () => undefined;
    const moved = new Promise<void>((resolve) => (firstMoved = resolve));
    let listers = 0;
    const lateListers = clientWith('lateListers', (next, context) => async (args) => {
      const input = args.input as { VersionStage?: string };
      if (context.commandName === 'ListSecretVersionIdsCommand') {
        await readBarrier;
        if (listers++ > 0) await moved;
      }
      const output = await next(args);
      if (context.commandName === 'GetSecretValueCommand' && ++reads === writers) allRead();
      if (context.commandName === 'UpdateSecretVersionStageCommand' && input.VersionStage === 'AWSCURRENT') {
        firstMoved();
      }
      return output;
    });
    const versionsBefore = (await admin.send(new ListSecretVersionIdsCommand({ SecretId: secretId })))
      .Versions;

    const results = await Promise.all(
      Array.from({ length: writers }, () =>
        runCli(['rotate', 'demo', '--json', '--secret-id', secretId], moto.awsEnv, {
          createSecretsManagerClient: lateListers,
          retry: { maxAttempts: 1 },
        }),
      ),
    );

    const versionsAfter = (await admin.send(new ListSecretVersionIdsCommand({ SecretId: secretId })))
      .Versions;
    expect(results.filter((result) => result.code === 0)).toHaveLength(1);
    expect(results.filter((result) => result.code === 1).map((result) => result.stderr)).toEqual(
      Array.from(
        { length: writers - 1 },
        () => 'error: the keys changed under us 1 time; nothing was lost, re-run the command\n',
      ),
    );
    expect((versionsAfter ?? []).length - (versionsBefore ?? []).length).toBe(1);
  });

  it.each<[string, (env: Env) => SecretsManagerClient, (secretId: string) => string]>([
    [
      'a move that fails after the new version was written',
      clientWith('failTheMove', (next, context) => (args) => {
        const input = args.input as { VersionStage?: string };
        if (
          context.commandName === 'UpdateSecretVersionStageCommand' &&
          input.VersionStage === 'AWSCURRENT'
        ) {
          return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
        }
        return next(args);
      }),
      (secretId) =>
        `error: could not move AWSCURRENT of secret ${secretId} to the new version: could not reach Secrets Manager ` +
        '(ECONNREFUSED); AWSCURRENT was not moved, the secret is unchanged\n',
    ],
    [
      'a put that landed although its answer was lost',
      clientWith('losePutAnswer', (next, context) => async (args) => {
        const output = await next(args);
        if (context.commandName !== 'PutSecretValueCommand') return output;
        throw Object.assign(new Error('The operation was aborted due to timeout'), {
          name: 'TimeoutError',
        });
      }),
      (secretId) =>
        `error: could not write a new version of secret ${secretId}: Secrets Manager did not answer in time; ` +
        'nothing was changed (AWSCURRENT untouched)\n',
    ],
  ])(
    '%s leaves AWSCURRENT unchanged and readable, and no AWSPENDING behind',
    async (_label, client, stderr) => {
      const secretId = await createSecret();
      const before = await current(secretId);

      const result = await runCli(['rotate', 'demo', '--secret-id', secretId], moto.awsEnv, {
        createSecretsManagerClient: client,
      });

      expect(result).toEqual({ code: 1, stdout: '', stderr: stderr(secretId) });
      expect(await current(secretId)).toEqual(before);
      expect(before.text).toBe(ORIGINAL);
      expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);
    },
  );

  it('fails cleanly when moto stops between writing the new version and moving AWSCURRENT', async () => {
    const doomed = await startMoto();
    const doomedAdmin = cliClient(doomed.awsEnv);
    const secretId = `payment-api-keys-${randomUUID()}`;
    await doomedAdmin.send(
      new CreateSecretCommand({
        Name: secretId,
        SecretString: ORIGINAL,
      }),
    );
    doomedAdmin.destroy();
    const stopBeforeMove = clientWith('stopMotoBeforeMove', (next, context) => async (args) => {
      if (context.commandName === 'UpdateSecretVersionStageCommand') await doomed.stop();
      return next(args);
    });

    const result = await runCli(['rotate', 'demo', '--secret-id', secretId], doomed.awsEnv, {
      createSecretsManagerClient: stopBeforeMove,
    });
    // The unreachable endpoint is named (host and port), as every AWS error line of the CLI names it.
    const reHost = new URL(doomed.endpoint).host.replace(/\./g, '\\.');

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        new RegExp(
          `^error: could not move AWSCURRENT of secret ${secretId} to the new version: could not reach Secrets ` +
            `Manager at ${reHost} \\(ECONNREFUSED\\); AWSCURRENT was most likely not moved \\(run "list" to check\\); ` +
            `could not remove the ${CLI_STAGING_LABEL} label from version ([0-9a-f-]{36}) of secret ${secretId} ` +
            `\\(could not reach Secrets Manager at ${reHost} \\(ECONNREFUSED\\)\\); it keeps that version from being removed until the next ` +
            `edit moves it, or: aws secretsmanager update-secret-version-stage --secret-id '${secretId}' ` +
            `--version-stage '${CLI_STAGING_LABEL}' --remove-from-version-id '\\1' --region us-east-1\\n$`,
        ),
      ) as unknown,
    });
  });

  it('gives the command that restores a secret scheduled for deletion, and changes nothing', async () => {
    const secretId = await createSecret();
    await admin.send(new DeleteSecretCommand({ SecretId: secretId, RecoveryWindowInDays: 7 }));

    const result = await runCli(['rotate', 'demo', '--secret-id', secretId], moto.awsEnv);

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: could not read secret ${secretId}: it is scheduled for deletion; to keep it, restore it: ` +
        `aws secretsmanager restore-secret --secret-id '${secretId}' --region us-east-1\n`,
    });
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);
  });

  /** moto's environment without its region: the CLI must find none, in a HOME with no AWS profile. */
  const withoutRegion = (): Record<string, string> =>
    Object.fromEntries(Object.entries(moto.awsEnv).filter(([name]) => name !== 'AWS_REGION'));

  it.each<[string, (home: string) => Record<string, string>, string]>([
    [
      'AWS_REGION unset, no profile naming one',
      (home) => ({ ...withoutRegion(), HOME: home }),
      'no AWS region: set AWS_REGION',
    ],
    [
      'AWS_REGION set but empty, no profile naming one',
      (home) => ({ ...withoutRegion(), AWS_REGION: '', HOME: home }),
      'no AWS region: set AWS_REGION',
    ],
    [
      'no credentials: empty credentials and config files, no instance metadata',
      (home) => {
        writeFileSync(join(home, 'credentials'), '');
        writeFileSync(join(home, 'config'), '');
        return {
          HOME: home,
          AWS_REGION: 'us-east-1',
          AWS_ENDPOINT_URL: moto.endpoint,
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_EC2_METADATA_DISABLED: 'true',
        };
      },
      'no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY ' +
        '(or use --file for a local key file)',
    ],
  ])('%s: one line naming what is missing, exit 1', async (_label, envIn, line) => {
    const home = mkdtempSync(join(tmpdir(), 'payment-cli-home-'));
    try {
      const result = await spawnCli(['list', '--secret-id', 'payment-api-keys'], envIn(home));

      expect(result).toEqual({ code: 1, stdout: '', stderr: `error: ${line}\n` });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
