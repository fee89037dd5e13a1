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
} from '@aws-sdk/client-secrets-manager';
import type { CallBounds } from '../../../shared/aws/bounded-client';
import { createOperatorSecretsManagerClient } from '../../../tools/common/aws-settings';
import type { CliIo } from '../../../tools/keys/main';
import { CLI_STAGING_LABEL } from '../../../tools/keys/secrets-manager-store';
import { createHandler, type RequestLimits } from '../../../lambda/payment/create-handler';
import { createMemoryRateLimiter } from '../../../lambda/payment/rate-limit/memory-limiter';
import { KeyCache } from '../../../lambda/payment/key-cache';
import { keyIdOf } from '../../../shared/keys/key-document';
import { toCompactDigestForm } from '../../../shared/keys/key-material';
import { parseKeyring } from '../../../shared/keys/keyring';
import { captureLogs } from '../../support/capture-logger';
import { baseEvent, paymentEvent } from '../../support/events';
import { DEMO_KEY } from '../../support/keys';
import { EMULATOR_CALL_BOUNDS, motoSecretSource, startMoto, type MotoServer } from '../../support/moto';
import {
  cliStderrLines,
  digestKeyIdOf,
  decide,
  GENERATED_KEY_PATTERN,
  keysTextOfSize,
  runCli as runCliWithBounds,
  spawnCli,
  type CliResult,
} from '../../support/keys-cli';

type Env = Readonly<Record<string, string | undefined>>;

let moto: MotoServer;
let admin: SecretsManagerClient;

/** The CLI's own client, with bounds for moto on a busy machine (or those given) rather than the operator's. */
function cliClient(env: Env, bounds: CallBounds = EMULATOR_CALL_BOUNDS): SecretsManagerClient {
  return createOperatorSecretsManagerClient(env, bounds);
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

/** SDK retries reuse the create's ClientRequestToken, which Secrets Manager (and moto) take as the same create. */
async function createSecret(value: string): Promise<string> {
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
  it('add-app, rotate, list and revoke round trip through AWSCURRENT, leaving no AWSPENDING behind', async () => {
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

    const listed = await keys('list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([
      {
        appId: 'demo',
        keyIds: [digestKeyIdOf(first), digestKeyIdOf(second)],
        keys: [first, second].map((key) => ({
          keyId: digestKeyIdOf(key),
          expires: null,
          expired: false,
          digest: true,
        })),
        allowedCidrs: null,
        rateLimit: { source: 'default' },
      },
    ]);

    const revoked = await keys('revoke', 'demo', digestKeyIdOf(first));
    expect(revoked.stdout).toBe(
      `app demo: revoked key ${digestKeyIdOf(first)}; valid keys: ${digestKeyIdOf(second)}\n`,
    );
    expect([await accepts(secretId, 'demo', first), await accepts(secretId, 'demo', second)]).toEqual([
      false,
      true,
    ]);

    const failures = [await keys('revoke', 'demo', digestKeyIdOf(first)), await keys('rotate', 'ghost')];
    expect(
      failures.map((result) => [result.code, result.stdout, cliStderrLines(result.stderr).length]),
    ).toEqual([
      [1, '', 1],
      [1, '', 1],
    ]);
    for (const result of [listed, revoked, ...failures, await keys('list')]) {
      expect(result.stdout + result.stderr).not.toContain(first);
      expect(result.stdout + result.stderr).not.toContain(second);
    }
    for (const result of [added, rotated]) expect(result.stderr).toBe('');
  });

  it('runs as a real process with `npx tsx bin/keys.ts`', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] }));

    const result = await spawnCli(['rotate', 'demo', '--json', '--secret-id', secretId], moto.awsEnv, 'npx');

    expect(result.code).toBe(0);
    expect(cliStderrLines(result.stderr)).toEqual([]);
    expect(keyOf(result)).toMatch(GENERATED_KEY_PATTERN);
    expect(await accepts(secretId, 'demo', keyOf(result))).toBe(true);
  });

  it('keeps every key that concurrent rotate processes reported as created', async () => {
    const original = 'test-demo-key-0123456789abcdef';
    const secretId = await createSecret(JSON.stringify({ demo: [original] }));
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
      expect(cliStderrLines(result.stderr)).toEqual([expect.stringMatching(/^error: /) as unknown]);
    }
    expect(decide(text, 'demo', original).ok).toBe(true);
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
    const original = 'test-demo-key-0123456789abcdef';
    const secretId = await createSecret(JSON.stringify({ demo: [original] }));
    const writers = 6;
    // Every writer's PutSecretValue waits until all have read, so all edits start from the same version.
    let reads = 0;
    let allRead: () => void = () => undefined;
    const barrier = new Promise<void>((resolve) => (allRead = resolve));
    const readThenWait = (env: Env) => {
      const client = cliClient(env);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'PutSecretValueCommand') await barrier;
          const output = await next(args);
          if (context.commandName === 'GetSecretValueCommand' && ++reads === writers) allRead();
          return output;
        },
        { step: 'initialize', name: 'allReadBeforeAnyWrite' },
      );
      return client;
    };

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
      keyIdOf(original),
      digestKeyIdOf(keyOf(winner)),
    ]);
    expect(await stagesOf(secretId)).not.toContain('AWSPENDING');
  });

  it('a writer whose race is already lost when it lists the versions writes nothing, so leaves no unused version', async () => {
    const original = 'test-demo-key-0123456789abcdef';
    const secretId = await createSecret(JSON.stringify({ demo: [original] }));
    const writers = 4;
    // All read the same version; every writer but the first lists the versions only once the first has moved
    // AWSCURRENT.
    let reads = 0;
    let allRead: () => void = () => undefined;
    const readBarrier = new Promise<void>((resolve) => (allRead = resolve));
    let firstMoved: () => void = () => undefined;
    const moved = new Promise<void>((resolve) => (firstMoved = resolve));
    let listers = 0;
    const lateListers = (env: Env) => {
      const client = cliClient(env);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const input = args.input as { VersionStage?: string };
          if (context.commandName === 'ListSecretVersionIdsCommand') {
            await readBarrier;
            if (listers++ > 0) await moved;
          }
          const output = await next(args);
          if (context.commandName === 'GetSecretValueCommand' && ++reads === writers) allRead();
          if (
            context.commandName === 'UpdateSecretVersionStageCommand' &&
            input.VersionStage === 'AWSCURRENT'
          ) {
            firstMoved();
          }
          return output;
        },
        { step: 'initialize', name: 'lateListers' },
      );
      return client;
    };
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

  it('a move that fails after the new version was written leaves AWSCURRENT unchanged and readable', async () => {
    const original = JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] });
    const secretId = await createSecret(original);
    const before = await current(secretId);
    const failingMove = (env: Env) => {
      const client = cliClient(env);
      client.middlewareStack.add(
        (next, context) => (args) => {
          const input = args.input as { VersionStage?: string };
          if (
            context.commandName === 'UpdateSecretVersionStageCommand' &&
            input.VersionStage === 'AWSCURRENT'
          ) {
            return Promise.reject(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
          }
          return next(args);
        },
        { step: 'initialize', name: 'failTheMove' },
      );
      return client;
    };

    const result = await runCli(['rotate', 'demo', '--secret-id', secretId], moto.awsEnv, {
      createSecretsManagerClient: failingMove,
    });

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: could not move AWSCURRENT of secret ${secretId} to the new version: could not reach Secrets Manager ` +
        '(ECONNREFUSED); AWSCURRENT was not moved, the secret is unchanged\n',
    });
    expect(await current(secretId)).toEqual(before);
    expect(before.text).toBe(original);
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);
  });

  it('a put that landed although its answer was lost leaves no AWSPENDING behind and AWSCURRENT unchanged', async () => {
    const original = JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] });
    const secretId = await createSecret(original);
    const before = await current(secretId);
    const putAnswerLost = (env: Env) => {
      const client = cliClient(env);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const output = await next(args);
          if (context.commandName !== 'PutSecretValueCommand') return output;
          throw Object.assign(new Error('The operation was aborted due to timeout'), {
            name: 'TimeoutError',
          });
        },
        { step: 'initialize', name: 'losePutAnswer' },
      );
      return client;
    };

    const result = await runCli(['rotate', 'demo', '--secret-id', secretId], moto.awsEnv, {
      createSecretsManagerClient: putAnswerLost,
    });

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: could not write a new version of secret ${secretId}: Secrets Manager did not answer in time; ` +
        'nothing was changed (AWSCURRENT untouched)\n',
    });
    expect(await current(secretId)).toEqual(before);
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);
  });

  it('fails cleanly when moto stops between writing the new version and moving AWSCURRENT', async () => {
    const doomed = await startMoto();
    const doomedAdmin = cliClient(doomed.awsEnv);
    const secretId = `payment-api-keys-${randomUUID()}`;
    await doomedAdmin.send(
      new CreateSecretCommand({
        Name: secretId,
        SecretString: JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] }),
      }),
    );
    doomedAdmin.destroy();
    const stopBeforeMove = (env: Env) => {
      const client = cliClient(env);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'UpdateSecretVersionStageCommand') await doomed.stop();
          return next(args);
        },
        { step: 'initialize', name: 'stopMotoBeforeMove' },
      );
      return client;
    };

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

  it('fails cleanly as a process when Secrets Manager cannot be reached', async () => {
    const stopped = await startMoto();
    await stopped.stop();

    const result = await spawnCli(['rotate', 'demo', '--secret-id', 'payment-api-keys'], stopped.awsEnv);

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: could not read secret payment-api-keys: could not reach Secrets Manager at ${new URL(stopped.endpoint).host} ` +
        'in region us-east-1 (ECONNREFUSED)\n',
    });
  });

  it.each([
    ['unset', {}],
    ['set but empty', { AWS_REGION: '' }],
  ])('says "no AWS region" when AWS_REGION is %s and no profile names one', async (_label, region) => {
    const home = mkdtempSync(join(tmpdir(), 'payment-cli-home-'));
    try {
      const withoutRegion = Object.fromEntries(
        Object.entries(moto.awsEnv).filter(([name]) => name !== 'AWS_REGION'),
      );
      const result = await spawnCli(['list', '--secret-id', 'payment-api-keys'], {
        ...withoutRegion,
        ...region,
        HOME: home,
      });

      expect(result).toEqual({ code: 1, stdout: '', stderr: 'error: no AWS region: set AWS_REGION\n' });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('names the region it used when the secret lives in another one', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] }));

    const result = await runCli(['list', '--secret-id', secretId], {
      ...moto.awsEnv,
      AWS_REGION: 'eu-west-1',
    });

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `error: secret ${secretId} not found in region eu-west-1 (or it has no AWSCURRENT version); ` +
        'check AWS_REGION\n',
    });
  });

  it('gives the command that restores a secret scheduled for deletion, and changes nothing', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] }));
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

  it('reports missing credentials in one line', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keys-no-credentials-'));
    try {
      writeFileSync(join(home, 'credentials'), '');
      writeFileSync(join(home, 'config'), '');

      const result = await spawnCli(['list', '--secret-id', 'payment-api-keys'], {
        HOME: home,
        AWS_REGION: 'us-east-1',
        AWS_ENDPOINT_URL: moto.endpoint,
        AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
        AWS_CONFIG_FILE: join(home, 'config'),
        AWS_EC2_METADATA_DISABLED: 'true',
      });

      expect(result).toEqual({
        code: 1,
        stdout: '',
        stderr:
          'error: no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY ' +
          '(or use --file for a local key file)\n',
      });
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('expiry, grace, prune, allowlists and rate limits through the key CLI, as the payment Lambda sees them (moto)', () => {
  const OLD_KEY = 'test-moto-old-key-0123456789abcdef';
  const OTHER_KEY = 'test-moto-other-key-0123456789abcdef';
  const OFFICE = '203.0.113.0/24';

  /** What the payment Lambda answers and logs for one request. */
  interface LambdaAnswer {
    readonly status: number;
    /** The log line's `reason`, `appId` and `keyId` (undefined for an accepted request's reason). */
    readonly reason: unknown;
    readonly appId: unknown;
    readonly keyId: unknown;
  }

  /**
   * One request through the handler as the Lambda composes it: a key cache over Secrets Manager (a new one, so it
   * reads AWSCURRENT as it is now, waiting for that read) and createHandler, with the request's clock and source.
   */
  async function lambdaAnswer(
    secretId: string,
    appId: string,
    appKey: string,
    request: { readonly now?: number; readonly sourceIp?: string; readonly limits?: RequestLimits } = {},
  ): Promise<LambdaAnswer> {
    const logs = captureLogs();
    const client = cliClient(moto.awsEnv);
    try {
      const keys = new KeyCache({
        source: motoSecretSource(moto, secretId),
        logger: logs.logger,
        ttlMs: 60_000,
        maxStaleMs: 0,
      });
      const now = request.now;
      const handle = createHandler({
        keys,
        logger: logs.logger,
        ...(now === undefined ? {} : { now: () => now }),
        ...(request.limits === undefined ? {} : { limits: request.limits }),
      });
      const { identity } = baseEvent.requestContext;
      const response = await handle(
        paymentEvent(
          [
            ['Content-Type', 'application/json'],
            ['App-id', appId],
            ['App-key', appKey],
          ],
          {
            body: '{"amount":1}',
            requestContext: {
              ...baseEvent.requestContext,
              identity: { ...identity, sourceIp: request.sourceIp ?? identity.sourceIp },
            },
          },
        ),
      );
      const line = logs.entries().find((entry) => String(entry.message).startsWith('request '));
      return { status: response.statusCode, reason: line?.reason, appId: line?.appId, keyId: line?.keyId };
    } finally {
      client.destroy();
    }
  }

  it('rotate --grace: the old key works until the grace ends, then gets 401 logged as expired_key with its id', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY], other: OTHER_KEY }));
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);
    const before = Date.now();

    const rotated = await keys('rotate', 'demo', '--grace', '1h', '--json');

    expect(rotated.code).toBe(0);
    const fresh = keyOf(rotated);
    const othersExpireBy = Date.parse(
      (JSON.parse(rotated.stdout) as { othersExpireBy: string }).othersExpireBy,
    );
    // Written in whole seconds, rounded down.
    expect(othersExpireBy).toBeGreaterThanOrEqual(Math.floor((before + 3_600_000) / 1000) * 1000);
    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { now: othersExpireBy - 1 })).toMatchObject({
      status: 200,
    });
    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { now: othersExpireBy })).toEqual({
      status: 401,
      reason: 'expired_key',
      appId: 'demo',
      keyId: keyIdOf(OLD_KEY),
    });
    expect(await lambdaAnswer(secretId, 'demo', fresh, { now: othersExpireBy })).toMatchObject({
      status: 200,
    });
    expect(await lambdaAnswer(secretId, 'other', OTHER_KEY, { now: othersExpireBy })).toMatchObject({
      status: 200,
    });
  });

  it('rotate --grace 0s, list --json and prune: the old key is refused at once, listed as expired, then removed', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY], other: OTHER_KEY }));
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);

    const fresh = keyOf(await keys('rotate', 'demo', '--grace', '0s', '--json'));

    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY)).toMatchObject({
      status: 401,
      reason: 'expired_key',
    });
    const listed = JSON.parse((await keys('list', '--json')).stdout) as unknown;
    expect(listed).toEqual([
      {
        appId: 'demo',
        keyIds: [keyIdOf(OLD_KEY), digestKeyIdOf(fresh)],
        keys: [
          {
            keyId: keyIdOf(OLD_KEY),
            expires: expect.stringMatching(/Z$/) as unknown,
            expired: true,
            digest: false,
          },
          { keyId: digestKeyIdOf(fresh), expires: null, expired: false, digest: true },
        ],
        allowedCidrs: null,
        rateLimit: { source: 'default' },
      },
      {
        appId: 'other',
        keyIds: [keyIdOf(OTHER_KEY)],
        keys: [{ keyId: keyIdOf(OTHER_KEY), expires: null, expired: false, digest: false }],
        allowedCidrs: null,
        rateLimit: { source: 'default' },
      },
    ]);

    const pruned = await keys('prune');

    expect(pruned).toEqual({
      code: 0,
      stderr: '',
      stdout: `app demo: removed expired key ${keyIdOf(OLD_KEY)}\n`,
    });
    expect(JSON.parse((await current(secretId)).text)).toEqual({
      demo: [toCompactDigestForm(fresh)],
      other: [OTHER_KEY],
    });
    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY)).toMatchObject({ status: 401, reason: 'wrong_key' });
    expect(await keys('prune')).toEqual({ code: 0, stderr: '', stdout: 'no expired keys\n' });
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT', 'AWSPREVIOUS']);
  });

  it('allow and disallow: a source outside the allowlist gets 401 logged as source_not_allowed with the key id', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY], other: OTHER_KEY }));
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);

    expect((await keys('allow', 'demo', OFFICE, '2001:db8::/32')).code).toBe(0);

    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { sourceIp: '203.0.113.10' })).toMatchObject({
      status: 200,
    });
    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { sourceIp: '198.51.100.10' })).toEqual({
      status: 401,
      reason: 'source_not_allowed',
      appId: 'demo',
      keyId: keyIdOf(OLD_KEY),
    });
    expect(await lambdaAnswer(secretId, 'other', OTHER_KEY, { sourceIp: '198.51.100.10' })).toMatchObject({
      status: 200,
    });

    expect((await keys('disallow', 'demo', OFFICE)).code).toBe(0);

    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { sourceIp: '203.0.113.10' })).toMatchObject({
      status: 401,
      reason: 'source_not_allowed',
    });
    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { sourceIp: '2001:db8::7' })).toMatchObject({
      status: 200,
    });

    expect((await keys('allow', 'demo', '--any')).code).toBe(0);

    expect(await lambdaAnswer(secretId, 'demo', OLD_KEY, { sourceIp: '198.51.100.10' })).toMatchObject({
      status: 200,
    });
    expect(JSON.parse((await current(secretId)).text)).toEqual({ demo: [OLD_KEY], other: [OTHER_KEY] });
  });

  it("limit: AWSCURRENT holds the app's own limit and the keyring serves it; limit --default removes it", async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY], other: OTHER_KEY }));
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);
    const servedLimit = async (appId: string) =>
      parseKeyring((await current(secretId)).text).keyring.get(appId)?.rateLimit;

    const limited = await keys('limit', 'demo', '--per-second', '20', '--burst', '40', '--json');

    expect(limited).toEqual({
      code: 0,
      stderr: '',
      stdout: '{"appId":"demo","rateLimit":{"perSecond":20,"burst":40,"source":"app"}}\n',
    });
    expect(JSON.parse((await current(secretId)).text)).toEqual({
      demo: { keys: [OLD_KEY], rateLimit: { perSecond: 20, burst: 40 } },
      other: [OTHER_KEY],
    });
    expect(await servedLimit('demo')).toEqual({ perSecond: 20, burst: 40 });
    expect(await servedLimit('other')).toBeUndefined();
    const listed = JSON.parse((await keys('list', '--json', '--default-limit', '50')).stdout) as {
      appId: string;
      rateLimit: unknown;
    }[];
    expect(listed.map(({ appId, rateLimit }) => ({ appId, rateLimit }))).toEqual([
      { appId: 'demo', rateLimit: { perSecond: 20, burst: 40, source: 'app' } },
      { appId: 'other', rateLimit: { perSecond: 50, burst: 50, source: 'default' } },
    ]);

    const restored = await keys('limit', 'demo', '--default');

    expect(restored).toEqual({
      code: 0,
      stderr: '',
      stdout: "app demo: no rate limit of its own; the stack's appRateLimit applies, if set\n",
    });
    expect(JSON.parse((await current(secretId)).text)).toEqual({ demo: [OLD_KEY], other: [OTHER_KEY] });
    expect(await servedLimit('demo')).toBeUndefined();
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT', 'AWSPREVIOUS']);
  });

  it("limit: the handler holds the app to its own limit, the other apps to the stack's default", async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY], other: OTHER_KEY }));
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);
    // One request every 1,000 s after the burst, so that what is refused does not depend on the machine's speed:
    // demo's own burst is 1, the stack's 2.
    expect((await keys('limit', 'demo', '--per-second', '0.001', '--burst', '1')).code).toBe(0);
    const limits: RequestLimits = {
      limiter: createMemoryRateLimiter(),
      defaultLimit: { perSecond: 0.001, burst: 2 },
      failure: 'open',
    };
    const answer = (appId: string, appKey: string) => lambdaAnswer(secretId, appId, appKey, { limits });

    const answers = [
      await answer('demo', OLD_KEY),
      await answer('demo', OLD_KEY),
      await answer('other', OTHER_KEY),
      await answer('other', OTHER_KEY),
      await answer('other', OTHER_KEY),
    ];

    expect(answers.map(({ status, reason, appId }) => ({ status, reason, appId }))).toEqual([
      { status: 200, reason: undefined, appId: 'demo' },
      { status: 429, reason: 'rate_limited', appId: 'demo' },
      { status: 200, reason: undefined, appId: 'other' },
      { status: 200, reason: undefined, appId: 'other' },
      { status: 429, reason: 'rate_limited', appId: 'other' },
    ]);
  });

  it('limit with a bad rate is a usage error (exit 2) that leaves the secret as it was', async () => {
    const secretId = await createSecret(JSON.stringify({ demo: [OLD_KEY] }));
    const before = await current(secretId);

    const refused = await runCli(
      ['limit', 'demo', '--per-second', '0', '--secret-id', secretId],
      moto.awsEnv,
    );

    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: --per-second must be a number of requests per second from 0.001 to 10000\n',
    });
    expect(await current(secretId)).toEqual(before);
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);
  });

  it('refuses a write past 65,536 bytes without touching the secret, and warns from 80% full', async () => {
    const nearlyFull = keysTextOfSize(65_520);
    // The new key's entry, `,"d:<22>"`, is 27 bytes.
    const secretId = await createSecret(nearlyFull);
    const keys = (...argv: string[]) => runCli([...argv, '--secret-id', secretId], moto.awsEnv);
    const before = await current(secretId);

    const refused = await keys('rotate', 'demo');

    expect(refused).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^error: the keys would take 65,547 bytes, 11 over the 65,536 a secret can hold; nothing was written\. /,
      ) as unknown,
    });
    expect(await current(secretId)).toEqual(before);
    expect(await stagesOf(secretId)).toEqual(['AWSCURRENT']);

    const revoked = await keys('revoke', 'demo', keyIdOf(DEMO_KEY), '--force');

    expect(revoked.code).toBe(0);
    expect(cliStderrLines(revoked.stderr)).toEqual([
      expect.stringMatching(
        /^warning: the keys will take 65,4\d\d bytes, 99\.\d% of the 65,536 a secret can hold /,
      ),
    ]);
  });
});
