/**
 * --stack against moto: a CloudFormation stack holding only the two outputs a payment-api stack has (and the
 * one resource CloudFormation requires), pointing at a contract server on loopback and a secret in moto's
 * Secrets Manager.
 */
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { ListSecretsCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKey, toDigestForm } from '../../../shared/keys/key-material';
import { createSmokeAwsClients } from '../../../tools/smoke/aws-clients';
import {
  createSecret,
  EMULATOR_CALL_BOUNDS,
  MOTO_AWS_ENV,
  sharedMoto,
  type MotoServer,
} from '../../support/moto';
import { createMotoStack } from '../../support/registry-moto';
import { requestHeaders, startContractServer, type ContractServer } from '../../support/contract-server';
import { ownStderrLines, parseReport, runSmokeInProcess, spawnSmoke } from '../../support/run-smoke';

const OLD_KEY = generateKey();
const NEW_KEY = generateKey();
const HASHED_KEY = generateKey();
const KEYS = { demo: [OLD_KEY, NEW_KEY], hashed: [toDigestForm(HASHED_KEY)] };

let moto: MotoServer;
let secretsManager: SecretsManagerClient;
let cloudFormation: CloudFormationClient;
let api: ContractServer;
let secretArn: string;

async function createStack(outputs: Readonly<Record<string, string>>): Promise<string> {
  const name = `payment-api-smoke-${randomUUID().slice(0, 8)}`;
  await createMotoStack(cloudFormation, name, outputs);
  return name;
}

/** SDK retries reuse the create's ClientRequestToken, which Secrets Manager (and moto) take as the same create. */
async function createKeysSecret(text: string): Promise<string> {
  return createSecret(secretsManager, `payment-api-keys-${randomUUID()}`, text);
}

/** The smoke tool's own clients, but with bounds for moto on a busy machine rather than the operator's. */
function smokeIo() {
  return { awsCallBounds: EMULATOR_CALL_BOUNDS };
}

beforeAll(async () => {
  moto = await sharedMoto();
  ({ secretsManager, cloudFormation } = createSmokeAwsClients(moto.awsEnv, EMULATOR_CALL_BOUNDS));
  // moto loads each service on its first call, for seconds: done here, once, so no test's call waits on it.
  await cloudFormation.send(new DescribeStacksCommand({}));
  await secretsManager.send(new ListSecretsCommand({}));
  api = await startContractServer(KEYS);
  secretArn = await createKeysSecret(JSON.stringify(KEYS));
});

afterAll(async () => {
  secretsManager.destroy();
  cloudFormation.destroy();
  await api.close();
  await moto.stop();
});

describe('npm run smoke -- --stack, against moto', () => {
  it('reads the URL and the newest plain key from the stack and passes, in process and as a process with the standard AWS environment, printing no key', async () => {
    // Arrange
    const stack = await createStack({ PaymentUrl: api.paymentUrl, KeysSecretArn: secretArn });
    const before = api.received.length;

    // Act
    const run = await runSmokeInProcess(
      ['--stack', stack, '--app-id', 'demo', '--json'],
      moto.awsEnv,
      smokeIo(),
    );
    const spawned = await spawnSmoke(['--stack', stack, '--app-id', 'demo'], moto.awsEnv);

    // Assert: in process, the JSON report and the key sent...
    const report = parseReport(run.stdout);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(report).toMatchObject({
      url: api.paymentUrl,
      stack,
      appId: 'demo',
      passed: true,
      requestsSent: 11,
    });
    const accepted = api.received[before];
    expect(accepted === undefined ? [] : requestHeaders(accepted, 'App-key')).toEqual([NEW_KEY]);
    expect(run.stdout).not.toContain(NEW_KEY);
    expect(run.stdout).not.toContain(OLD_KEY);
    // ...and as a process, the table.
    expect(spawned.code).toBe(0);
    expect(ownStderrLines(spawned.stderr)).toEqual([]);
    expect(spawned.stdout.split('\n')[0]).toBe(
      `payment-api smoke test of ${api.paymentUrl} (stack ${stack}) as App-id demo`,
    );
    expect(spawned.stdout).toContain('passed: 12 of 12 checks, 11 requests sent');
    expect(spawned.stdout).not.toContain(NEW_KEY);
  });

  /** Each case sets up what it needs and says the one line it expects. */
  interface StopCase {
    readonly argv: readonly string[];
    readonly line: string;
  }
  const withStack = async (outputs: Readonly<Record<string, string>>, appId = 'demo'): Promise<string[]> => [
    '--stack',
    await createStack(outputs),
    '--app-id',
    appId,
  ];

  it.each<[string, () => Promise<StopCase>]>([
    [
      'an app that holds only digests',
      async () => ({
        argv: await withStack({ PaymentUrl: api.paymentUrl, KeysSecretArn: secretArn }, 'hashed'),
        line:
          `error: app hashed has only sha256: digests in secret ${secretArn}, no key the test could send; ` +
          `run with --url ${api.paymentUrl} and the app's key in APP_KEY`,
      }),
    ],
    [
      'an app the secret does not hold',
      async () => ({
        argv: await withStack({ PaymentUrl: api.paymentUrl, KeysSecretArn: secretArn }, 'ghost'),
        line: `error: app ghost is not in secret ${secretArn}`,
      }),
    ],
    [
      'a stack that does not exist',
      () =>
        Promise.resolve({
          argv: ['--stack', 'NoSuchStack', '--app-id', 'demo'],
          line: 'error: stack NoSuchStack not found (check AWS_REGION and the account of the credentials)',
        }),
    ],
    [
      'a stack without the KeysSecretArn output',
      async () => {
        const argv = await withStack({ PaymentUrl: api.paymentUrl });
        return {
          argv,
          line: `error: stack ${argv[1] ?? ''} (CREATE_COMPLETE) has no KeysSecretArn output; is it a payment-api stack, deployed?`,
        };
      },
    ],
    [
      'a PaymentUrl output that is not a payment URL',
      async () => {
        const argv = await withStack({ PaymentUrl: 'http://203.0.113.7/payment', KeysSecretArn: secretArn });
        return {
          argv,
          line:
            `error: the PaymentUrl output of stack ${argv[1] ?? ''} must use https:// (http:// only for 127.0.0.1, ` +
            '::1 or localhost): the key would cross the network in clear text',
        };
      },
    ],
    [
      'a secret that is not JSON',
      async () => {
        const arn = await createKeysSecret('not json');
        return {
          argv: await withStack({ PaymentUrl: api.paymentUrl, KeysSecretArn: arn }),
          line: `error: cannot read the keys in secret ${arn}: the secret is not valid JSON`,
        };
      },
    ],
  ])('stops at %s: one line, exit 1, no request sent', async (_label, setUp) => {
    // Arrange
    const { argv, line } = await setUp();
    const before = api.received.length;

    // Act
    const run = await runSmokeInProcess(argv, moto.awsEnv, smokeIo());

    // Assert
    expect(run).toEqual({ code: 1, stdout: '', stderr: `${line}\n` });
    expect(api.received.length).toBe(before);
  });

  it.each<[string, (home: string) => Record<string, string>, unknown]>([
    [
      'missing credentials (before any call)',
      (home) => {
        writeFileSync(join(home, 'credentials'), '');
        writeFileSync(join(home, 'config'), '');
        return {
          HOME: home,
          AWS_REGION: MOTO_AWS_ENV.AWS_REGION,
          AWS_ENDPOINT_URL: moto.endpoint,
          AWS_SHARED_CREDENTIALS_FILE: join(home, 'credentials'),
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_EC2_METADATA_DISABLED: 'true',
        };
      },
      expect.stringMatching(
        /^error: no usable AWS credentials \(.+\): set AWS_PROFILE \(after "aws sso login" for an SSO profile\), or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; or use --url with the key in APP_KEY$/,
      ),
    ],
    [
      'a missing region',
      (home) => {
        writeFileSync(join(home, 'config'), '');
        return {
          HOME: home,
          AWS_CONFIG_FILE: join(home, 'config'),
          AWS_ACCESS_KEY_ID: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
          AWS_SECRET_ACCESS_KEY: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
          AWS_ENDPOINT_URL: moto.endpoint,
        };
      },
      'error: no AWS region: set AWS_REGION (or use a profile that names one)',
    ],
  ])('reports %s in one line, exit 1', async (_label, envIn, line) => {
    const home = mkdtempSync(join(tmpdir(), 'smoke-home-'));
    try {
      const run = await spawnSmoke(['--stack', 'PaymentApi', '--app-id', 'demo'], envIn(home));

      expect(run.code).toBe(1);
      expect(run.stdout).toBe('');
      expect(ownStderrLines(run.stderr)).toEqual([line]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
