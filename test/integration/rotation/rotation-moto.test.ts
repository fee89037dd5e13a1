/**
 * Scheduled rotation against the Secrets Manager API (moto): what needs the real store, namely the versions and
 * stages a rotation writes and moves, its idempotence by token, an operator's write during it, and the versions each
 * shard of a registry gets. What a rotation does to each app (expiries, allowlists, rate limits, pruning, a fresh key
 * each) is test/unit/shared/keys/rotation.test.ts's; each step's checks, logs and size guard are
 * test/unit/lambda/rotation/create-rotation-handler.test.ts's and rotation-rules.test.ts's.
 */
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { toDigestForm } from '../../../shared/keys/key-material';
import { parseKeyDocument } from '../../../shared/keys/key-document';
import { parseKeyring } from '../../../shared/keys/keyring';
import {
  createRotationHandler,
  type RotationHandler,
  type RotationHandlerOptions,
} from '../../../lambda/rotation/create-rotation-handler';
import { ROTATION_STEPS, type RotationEvent } from '../../../lambda/rotation/rotation-rules';
import { captureLogs, type CapturedLogs } from '../../support/capture-logger';
import {
  beginMotoRotation,
  createSecret,
  countCommands,
  motoSecretSource,
  motoSecretsManager,
  sharedMoto,
  type CommandCount,
  type MotoServer,
} from '../../support/moto';
import { createMotoRegistry } from '../../support/registry-moto';
import { appsOnEveryShard } from '../../support/shards';

const KEY_A = 'test-moto-rotation-demo-key-a-0123456789';
const KEY_P = 'test-moto-rotation-partner-key-0123456789';
const HASHED = toDigestForm('test-moto-rotation-hashed-key-0123456789');
const INITIAL = JSON.stringify({ demo: [KEY_A], partner: KEY_P, hashed: [HASHED] });

const DAY_MS = 86_400_000;
const PERIOD_MS = 30 * DAY_MS;
const GENERATED_KEY = /^pay_[0-9A-Za-z]{38}$/;

/** One key of each app, in every form the secret may hold. */
const FORMS = {
  bare: 'test-moto-forms-bare-key-0123456789',
  listed1: 'test-moto-forms-listed-key-1-0123456789',
  listed2: 'test-moto-forms-listed-key-2-0123456789',
  expiringSoon: 'test-moto-forms-expiring-soon-0123456789',
  objectNoExpiry: 'test-moto-forms-object-no-expiry-0123456789',
  lone: 'test-moto-forms-lone-object-0123456789',
  fenced: 'test-moto-forms-fenced-key-0123456789',
  closed: 'test-moto-forms-closed-key-0123456789',
  limited: 'test-moto-forms-limited-key-0123456789',
  staleOld: 'test-moto-forms-stale-old-key-0123456789',
  staleCurrent: 'test-moto-forms-stale-current-0123456789',
  lapsed: 'test-moto-forms-lapsed-key-0123456789',
} as const;

/** The rotation's clock in the test of every form: the expiries below are on either side of it. */
const ROTATED_AT = Date.parse('2026-06-01T08:00:00Z');
/** Written by hand, spaced and out of order, as an operator's secret may be. */
const EVERY_FORM = JSON.stringify(
  {
    bare: FORMS.bare,
    listed: [FORMS.listed1, FORMS.listed2],
    expiring: [
      { key: FORMS.expiringSoon, expires: '2026-06-20T10:00:00+02:00' },
      { key: FORMS.objectNoExpiry },
    ],
    lone: { key: FORMS.lone, expires: '2027-01-01T00:00:00Z' },
    hashed: [HASHED],
    fenced: { keys: [FORMS.fenced], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'] },
    closed: { keys: [FORMS.closed], allowedCidrs: [] },
    limited: { keys: [FORMS.limited], rateLimit: { perSecond: 0.5 } },
    stale: [{ key: FORMS.staleOld, expires: '2026-05-01T00:00:00Z' }, FORMS.staleCurrent],
    lapsed: [{ key: FORMS.lapsed, expires: '2026-01-01T00:00:00Z' }],
  },
  null,
  2,
);

describe('scheduled rotation against the Secrets Manager API (moto)', () => {
  let moto: MotoServer;
  let client: SecretsManagerClient;
  let writes: CommandCount;
  let logs: CapturedLogs = captureLogs();

  beforeAll(async () => {
    moto = await sharedMoto();
    client = motoSecretsManager(moto);
    // Every write of a version, whatever step makes it: PutSecretValue is the only one.
    writes = countCommands(client, PutSecretValueCommand.name);
  });

  afterAll(async () => {
    client.destroy();
    await moto.stop();
  });

  beforeEach(() => {
    logs = captureLogs();
  });

  function rotationHandler(options: Partial<RotationHandlerOptions> = {}): RotationHandler {
    return createRotationHandler({
      client,
      keep: 2,
      periodMs: PERIOD_MS,
      ...options,
      logger: options.logger ?? logs.logger,
    });
  }

  async function createKeysSecret(secretString = INITIAL): Promise<string> {
    return createSecret(client, `payment-api-keys-${randomUUID()}`, secretString);
  }

  async function stagesOf(secretArn: string): Promise<Record<string, string[]>> {
    const output = await client.send(new DescribeSecretCommand({ SecretId: secretArn }));
    return output.VersionIdsToStages ?? {};
  }

  /** What Secrets Manager does when a rotation starts, as far as moto does it; checked, not assumed. */
  async function beginRotation(secretArn: string, token: string, rotateImmediately = true): Promise<void> {
    await beginMotoRotation(client, secretArn, token, rotateImmediately);
    const description = await client.send(new DescribeSecretCommand({ SecretId: secretArn }));
    expect(description.RotationEnabled).toBe(true);
    expect(description.VersionIdsToStages?.[token]).toEqual(['AWSPENDING']);
  }

  async function runSteps(secretArn: string, token: string, handler = rotationHandler()): Promise<void> {
    for (const step of ROTATION_STEPS) {
      const event: RotationEvent = { Step: step, SecretId: secretArn, ClientRequestToken: token };
      await handler(event);
    }
  }

  async function rotate(secretArn: string, handler = rotationHandler()): Promise<string> {
    const token = randomUUID();
    await beginRotation(secretArn, token);
    await runSteps(secretArn, token, handler);
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

  it('rotates a secret holding every form: the rotation is the current version, written compact, read without a problem', async () => {
    const secretArn = await createKeysSecret(EVERY_FORM);

    const token = await rotate(secretArn, rotationHandler({ now: () => ROTATED_AT }));

    const current = await readCurrent(secretArn);
    expect(current.versionId).toBe(token);
    expect(current.secretString).toBe(JSON.stringify(JSON.parse(current.secretString)));
    expect(Object.keys(JSON.parse(current.secretString) as Record<string, unknown>)).toEqual([
      'bare',
      'closed',
      'expiring',
      'fenced',
      'hashed',
      'lapsed',
      'limited',
      'listed',
      'lone',
      'stale',
    ]);
    // Read exactly as the payment Lambda reads it: no problem found.
    expect(parseKeyring(await motoSecretSource(moto, secretArn).fetchSecretString()).problems).toEqual([]);
    const written = logs.lines.join('\n');
    for (const key of [...Object.values(FORMS), HASHED]) expect(written).not.toContain(key);
  });

  it('is idempotent: the same four steps again with the same token change nothing; and leaves no AWSPENDING label behind, so the next rotation can start', async () => {
    const secretArn = await createKeysSecret();
    const token = await rotate(secretArn);
    const stagesAfterFirstRun = await stagesOf(secretArn);
    const valueAfterFirstRun = await readCurrent(secretArn);

    await runSteps(secretArn, token);

    expect(await stagesOf(secretArn)).toEqual(stagesAfterFirstRun);
    expect(await readCurrent(secretArn)).toEqual(valueAfterFirstRun);
    await rotate(secretArn);
    const pending = Object.entries(await stagesOf(secretArn)).filter(([, stages]) =>
      stages.includes('AWSPENDING'),
    );
    expect(pending).toEqual([]);
  });

  it('is idempotent step by step: each step run twice, on clocks a period apart, still rotates once', async () => {
    const secretArn = await createKeysSecret();
    const token = randomUUID();
    await beginRotation(secretArn, token);
    const readPending = async (): Promise<string | undefined> =>
      (
        await client.send(
          new GetSecretValueCommand({ SecretId: secretArn, VersionId: token, VersionStage: 'AWSPENDING' }),
        )
      ).SecretString;
    const pendingAfterEachCreate: (string | undefined)[] = [];
    // A retried step may run much later than the first try: a period later, the superseded keys have expired.
    const clocks = [Date.now(), Date.now() + PERIOD_MS];

    for (const step of ROTATION_STEPS) {
      for (const now of clocks) {
        await rotationHandler({ now: () => now })({
          Step: step,
          SecretId: secretArn,
          ClientRequestToken: token,
        });
        if (step === 'createSecret') pendingAfterEachCreate.push(await readPending());
      }
    }

    expect(pendingAfterEachCreate[1]).toBe(pendingAfterEachCreate[0]);
    const current = await readCurrent(secretArn);
    expect(current).toEqual({ versionId: token, secretString: pendingAfterEachCreate[0] });
    expect(
      parseKeyDocument(current.secretString)
        .get('demo')
        ?.keys.map((key) => key.stored),
    ).toEqual([KEY_A, expect.stringMatching(GENERATED_KEY)]);
    expect(Object.keys(await stagesOf(secretArn))).toHaveLength(2);
  });

  it('does not move AWSCURRENT over a version in which an operator added a key during the rotation', async () => {
    const secretArn = await createKeysSecret();
    const token = randomUUID();
    await beginRotation(secretArn, token);
    const handler = rotationHandler();
    await handler({ Step: 'createSecret', SecretId: secretArn, ClientRequestToken: token });
    const operatorValue = JSON.stringify({
      demo: [KEY_A, 'test-moto-rotation-operator-key-0123456789'],
      partner: KEY_P,
      hashed: [HASHED],
    });
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

    await rotationHandler()({ Step: 'testSecret', SecretId: secretArn, ClientRequestToken: token });

    expect((await readCurrent(secretArn)).secretString).toBe(INITIAL);
  });

  /**
   * A registry of 4 shards with one function, as the stack sets it up: Secrets Manager invokes it for one shard per
   * rotation. Each rotation writes exactly one version of its own shard and nothing elsewhere: a shard's version
   * quota (about 100 within 24 hours) is spent at one version per rotation. That retried steps write nothing more is
   * one secret's behaviour: the step-by-step test above (its versions) and create-rotation-handler.test.ts's (its
   * calls).
   */
  it('writes one version per shard when every shard’s schedule comes due, on the one function, and nothing in the others', async () => {
    // Arrange
    const shards = 4;
    const apps = appsOnEveryShard(shards, 2);
    const texts = Array.from({ length: shards }, (_, shard) =>
      JSON.stringify(Object.fromEntries((apps.get(shard) ?? []).map((appId) => [appId, KEY_A]))),
    );
    const {
      layout: { shardIds },
    } = await createMotoRegistry({ secretsManager: client }, { shards, texts });
    /** Every version of every shard, by shard. */
    const versions = (): Promise<string[][]> =>
      Promise.all(
        shardIds.map(async (id) => {
          const output = await client.send(
            new ListSecretVersionIdsCommand({ SecretId: id, IncludeDeprecated: true }),
          );
          return (output.Versions ?? []).map((version) => version.VersionId ?? '').sort();
        }),
      );
    const before = await versions();
    const handler = rotationHandler();
    writes.reset();

    // Act: each shard's schedule come due, in turn.
    const tokens: string[] = [];
    for (const secretId of shardIds) tokens.push(await rotate(secretId, handler));

    // Assert: each shard's versions compared whole, so a rotation that wrote anywhere but its own shard would show.
    expect(writes.calls()).toBe(shards);
    expect(await versions()).toEqual(before.map((ids, shard) => [...ids, tokens[shard] ?? ''].sort()));
  });

  afterEach(() => {
    const written = logs.lines.join('\n');
    expect(written).not.toContain(KEY_A);
    expect(written).not.toContain(KEY_P);
    expect(written).not.toMatch(/payk_[A-Za-z0-9_-]{43}|pay_[0-9A-Za-z]{38}/);
  });
});
