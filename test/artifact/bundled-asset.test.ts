import { CreateSecretCommand } from '@aws-sdk/client-secrets-manager';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invokeAsset } from '../support/asset-runner';
import { paymentEvent } from '../support/events';
import { DEMO_KEY, PARTNER_KEY, SECRET_STRING } from '../support/keys';
import { motoSecretsManager, startMoto, type MotoServer } from '../support/moto';
import { synthesizeApp, type SynthesizedApp } from '../support/synth';

const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];

/**
 * The deployable artifact, not the source: synthesize with the real CLI, take the bundled payment Lambda out
 * of cdk.out, load it in a fresh Node process and invoke it against moto's Secrets Manager API.
 */
describe('the bundled payment Lambda in cdk.out', () => {
  let outdir: string;
  let app: SynthesizedApp;
  let moto: MotoServer;
  let secretArn: string;

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), 'payment-cdk-out-'));
    [app, moto] = await Promise.all([synthesizeApp(outdir), startMoto()]);
    const client = motoSecretsManager(moto);
    const created = await client.send(
      new CreateSecretCommand({ Name: 'payment-api/keys', SecretString: SECRET_STRING }),
    );
    secretArn = created.ARN ?? '';
    client.destroy();
  }, 180_000);

  afterAll(async () => {
    await moto.stop();
    rmSync(outdir, { recursive: true, force: true });
  });

  const runtimeEnv = (): Record<string, string> => ({
    ...moto.awsEnv,
    KEYS_SECRET_ID: secretArn,
    KEY_CACHE_TTL_SECONDS: '60',
    KEY_MAX_STALE_SECONDS: '900',
  });

  it('is a self-contained CommonJS bundle that needs nothing but Node built-ins', () => {
    // Never hand the minified source to a matcher: a failure would print all of it.
    const source = readFileSync(join(app.paymentAssetDir, 'index.js'), 'utf8');
    const required = new Set([...source.matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]));
    const nonBuiltins = [...required].filter((name) => name !== undefined && !name.startsWith('node:'));

    expect(source.includes('module.exports')).toBe(true);
    expect(/^import\s/m.test(source)).toBe(false);
    // The SDK's optional CRT signer is only required inside a try/catch, for SigV4a, which we never use.
    expect(nonBuiltins).toEqual(['@aws-sdk/signature-v4-crt']);
  });

  it('answers 200 to a valid key and 401 to a wrong key or an unknown app, reading keys from Secrets Manager', async () => {
    const events = [
      paymentEvent([JSON_TYPE, ['App-id', 'demo'], ['App-key', DEMO_KEY]]),
      paymentEvent([JSON_TYPE, ['App-id', 'partner'], ['App-key', PARTNER_KEY]]),
      paymentEvent([JSON_TYPE, ['App-id', 'demo'], ['App-key', PARTNER_KEY]]),
      paymentEvent([JSON_TYPE, ['App-id', 'nobody'], ['App-key', DEMO_KEY]]),
    ];

    const { results, output } = await invokeAsset(app.paymentAssetDir, events, runtimeEnv());

    expect(results.map((result) => result.statusCode)).toEqual([200, 200, 401, 401]);
    expect(JSON.parse(results[0]?.body ?? '')).toEqual({ code: 'ok', message: 'Payment request accepted.' });
    expect(results[2]?.body).toBe(results[3]?.body);
    expect(output).toContain('"message":"keys loaded"');
    expect(output).not.toContain(DEMO_KEY);
    expect(output).not.toContain(PARTNER_KEY);
  });

  it('answers 503 when Secrets Manager cannot be reached, and logs no key', async () => {
    const unreachable = { ...runtimeEnv(), AWS_ENDPOINT_URL: `http://127.0.0.1:${moto.port}` };
    await moto.stop();

    const { results, output } = await invokeAsset(
      app.paymentAssetDir,
      [paymentEvent([JSON_TYPE, ['App-id', 'demo'], ['App-key', DEMO_KEY]])],
      unreachable,
    );

    expect(results.map((result) => result.statusCode)).toEqual([503]);
    expect(JSON.parse(results[0]?.body ?? '')).toMatchObject({ code: 'unavailable' });
    expect(output).toContain('"message":"keys refresh failed"');
    expect(output).not.toContain(DEMO_KEY);
  });
});
