/**
 * The whole rotation path against a real Secrets Manager API (moto) and the running service: the local server
 * started as `npm start` with KEYS_SECRET_ID, which runs the same handler and key cache as the Lambda. Operator
 * changes are made with the key CLI as a separate process, and with the rotation Lambda's four steps.
 */
import { type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { keyIdOf, parseKeyDocument } from '../../../shared/keys/key-document';
import { createRotationHandler } from '../../../lambda/rotation/create-rotation-handler';
import { ROTATION_STEPS } from '../../../lambda/rotation/rotation-rules';
import { spawnCli } from '../../support/keys-cli';
import { captureLogs } from '../../support/capture-logger';
import {
  credentials,
  killAllLocalServers,
  send,
  SETUP_TIMEOUT_MS,
  startLocalServer,
  stopLocalServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { freeLoopbackPort } from '../../support/loopback';
import {
  beginMotoRotation,
  createSecret,
  motoSecretSource,
  motoSecretsManager,
  sharedMoto,
  type MotoServer,
} from '../../support/moto';

const TTL_SECONDS = 2;
/** Past the TTL, the next request refreshes: wait the TTL and a little more, then look once. */
const PAST_TTL_MS = TTL_SECONDS * 1000 + 500;
const FIRST_KEY = 'test-lifecycle-demo-first-key-0123456789';
const PARTNER_KEY = 'test-lifecycle-partner-key-0123456789';

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

describe('key lifecycle: CLI and scheduled rotation, seen by the running service', () => {
  let moto: MotoServer;
  let client: SecretsManagerClient;
  let secretArn: string;
  let server: LocalServerProcess | undefined;
  let cliEnv: Record<string, string>;
  const printedKeys: string[] = [];
  /** Keys the rotation Lambda made: never printed by anything. */
  const scheduledKeys: string[] = [];
  const cliOutput: string[] = [];

  function running(): LocalServerProcess {
    if (server === undefined) throw new Error('the local server did not start');
    return server;
  }

  async function status(appId: string, appKey: string): Promise<number> {
    return (await send(running().baseUrl, { headers: credentials(appId, appKey) })).status;
  }

  async function keys(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    const result = await spawnCli([...argv, '--secret-id', secretArn], cliEnv);
    cliOutput.push(result.stdout, result.stderr);
    return result;
  }

  async function rotateWithCli(appId: string): Promise<{ keyId: string; key: string }> {
    const result = await keys('rotate', appId, '--json');
    expect(result.code).toBe(0);
    const created = JSON.parse(result.stdout) as { appId: string; keyId: string; key: string };
    printedKeys.push(created.key);
    return created;
  }

  beforeAll(async () => {
    moto = await sharedMoto();
    client = motoSecretsManager(moto);
    secretArn = await createSecret(
      client,
      'payment-api/lifecycle',
      JSON.stringify({ demo: [FIRST_KEY], partner: PARTNER_KEY }),
    );
    cliEnv = { ...moto.awsEnv, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' };
    server = await startLocalServer({
      ...moto.awsEnv,
      PORT: String(await freeLoopbackPort()),
      KEYS_SECRET_ID: secretArn,
      KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS),
    });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    if (server !== undefined) await stopLocalServer(server).catch(() => undefined);
    killAllLocalServers();
    client.destroy();
    await moto.stop();
  });

  let rotatedKey: { keyId: string; key: string };

  it('accepts both the old and the new key within the TTL after `keys rotate`', async () => {
    rotatedKey = await rotateWithCli('demo');

    await pause(PAST_TTL_MS);

    expect(await status('demo', rotatedKey.key)).toBe(200);
    expect(await status('demo', FIRST_KEY)).toBe(200);
  });

  it('refuses the revoked key within the TTL after `keys revoke`, and still accepts the other', async () => {
    const revoke = await keys('revoke', 'demo', keyIdOf(FIRST_KEY));
    expect(revoke.code).toBe(0);

    await pause(PAST_TTL_MS);

    expect(await status('demo', FIRST_KEY)).toBe(401);
    expect(await status('demo', rotatedKey.key)).toBe(200);
    expect(await status('partner', PARTNER_KEY)).toBe(200);
  });

  it('accepts the key a scheduled rotation adds, and still the previous one (now dated), within the TTL', async () => {
    // moto starts the rotation; its four steps are then run here, in order.
    const token = randomUUID();
    await beginMotoRotation(client, secretArn, token);
    const rotation = createRotationHandler({
      client,
      keep: 2,
      periodMs: 30 * 86_400_000,
      logger: captureLogs().logger,
    });
    for (const step of ROTATION_STEPS)
      await rotation({ Step: step, SecretId: secretArn, ClientRequestToken: token });
    const rotated = parseKeyDocument(await motoSecretSource(moto, secretArn).fetchSecretString());
    const demoKeys = rotated.get('demo')?.keys.map((key) => key.stored) ?? [];
    const partnerKeys = rotated.get('partner')?.keys.map((key) => key.stored) ?? [];
    const scheduledKey = demoKeys[demoKeys.length - 1] ?? '';
    scheduledKeys.push(scheduledKey, partnerKeys[partnerKeys.length - 1] ?? '');

    await pause(PAST_TTL_MS);

    expect(demoKeys).toHaveLength(2);
    expect(await status('demo', scheduledKey)).toBe(200);
    expect(await status('demo', rotatedKey.key)).toBe(200);
    expect(await status('demo', FIRST_KEY)).toBe(401);
    expect(partnerKeys).toHaveLength(2);
    expect(await status('partner', scheduledKeys[1] ?? '')).toBe(200);
    expect(await status('partner', PARTNER_KEY)).toBe(200);
  });

  it('lists key ids only, and no key shows in CLI output or the service logs', async () => {
    const list = await keys('list', '--json');

    expect(JSON.parse(list.stdout)).toMatchObject([
      { appId: 'demo', keyIds: [rotatedKey.keyId, keyIdOf(scheduledKeys[0] ?? '')] },
      { appId: 'partner', keyIds: [keyIdOf(PARTNER_KEY), keyIdOf(scheduledKeys[1] ?? '')] },
    ]);
    const rotateOutputs = cliOutput.filter((text) => printedKeys.some((key) => text.includes(key)));
    const everythingElse = [
      ...cliOutput.filter((text) => !rotateOutputs.includes(text)),
      running().output(),
    ].join('\n');
    for (const key of [FIRST_KEY, PARTNER_KEY, ...printedKeys, ...scheduledKeys])
      expect(everythingElse.includes(key)).toBe(false);
    // Each CLI-made key was printed exactly once, in its own command's output.
    expect(rotateOutputs).toHaveLength(1);
  });
});
