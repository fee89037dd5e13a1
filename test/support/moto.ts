import { CreateTableCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import {
  CreateSecretCommand,
  ResourceNotFoundException,
  RotateSecretCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { COUNTER_TABLE } from '../../lambda/payment/rate-limit/counter-table';
import type { SecretSource } from '../../lambda/payment/key-cache';
import {
  createPaymentSecretsManagerClient,
  secretsManagerSource,
} from '../../lambda/payment/secrets-manager-source';
import type { AttemptBounds } from '../../shared/aws/aws-json-client';
import type { CallBounds } from '../../shared/aws/call-bounds';
import { canConnect, freeLoopbackPort } from './loopback';

/** Any credentials and a region: moto accepts them, and the SDK needs them to sign. */
export const MOTO_AWS_ENV = {
  AWS_REGION: 'us-east-1',
  AWS_ACCESS_KEY_ID: 'testing',
  AWS_SECRET_ACCESS_KEY: 'testing',
} as const;

/**
 * Bounds for a tool's AWS clients (its io seam) against moto on a loaded test machine. moto's first call to a
 * service loads that service (about 2.4 s idle for CloudFormation, several times that on two busy cores), past
 * the operator bounds' 3 s attempt, and a retried create that had landed then fails. So: one attempt, given as
 * long as jest gives the test; a test that needs the production bounds says so.
 */
export const EMULATOR_CALL_BOUNDS: CallBounds = {
  maxAttempts: 1,
  connectionTimeoutMs: 30_000,
  attemptTimeoutMs: 50_000,
  callDeadlineMs: 50_000,
};

/**
 * The payment Lambda's small client against moto: one attempt, and no socket timer; its callers' budgets are
 * EMULATOR_KEY_FETCH_BUDGET_MS and EMULATOR_LIMITER_DEADLINE_MS, set explicitly.
 */
export const EMULATOR_ATTEMPT_BOUNDS: AttemptBounds = {
  maxAttempts: 1,
  connectionTimeoutMs: 30_000,
};

/**
 * A fetch of the keys against moto (the Lambda's budget is 1.5 s): moto's first call to a service loads it, several
 * seconds on two busy cores. As long as jest gives the test.
 */
export const EMULATOR_KEY_FETCH_BUDGET_MS = 50_000;

/**
 * The rate-limited payment Lambda's whole-check budget against moto (its RATE_LIMIT_DEADLINE_MS; production's is
 * 150 ms): moto on two busy cores may take longer than that to answer an UpdateItem, and that must never turn into
 * a fail-open in a test that counts what the limiter accepted. Tests of the production bound leave it unset.
 */
export const EMULATOR_LIMITER_DEADLINE_MS = 10_000;

export interface MotoServer {
  /** `http://127.0.0.1:<port>`, for AWS_ENDPOINT_URL. */
  readonly endpoint: string;
  readonly port: number;
  /** The environment a child process needs to talk to this server. */
  readonly awsEnv: Readonly<Record<string, string>>;
  stop(): Promise<void>;
}

const PROJECT_ROOT = join(__dirname, '..', '..');

/** The project-local venv (made by scripts/python-tools.sh when the machine lacks moto) wins over PATH. */
export function motoServerCommand(): string {
  const fromEnv = process.env.MOTO_SERVER_BIN;
  if (fromEnv) return fromEnv;
  const local = join(PROJECT_ROOT, '.venv', 'bin', 'moto_server');
  return existsSync(local) ? local : 'moto_server';
}

function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => {
      resolve();
    });
  });
}

/** Stops a moto server and waits until it has exited: SIGTERM, then SIGKILL after 5 s. */
export async function stopMotoProcess(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  const killer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited(child);
  clearTimeout(killer);
}

/** Starts moto's server on a free port of 127.0.0.1 and waits until it accepts connections. */
export async function startMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const port = await freeLoopbackPort();
  const child = spawn(motoServerCommand(), ['-H', '127.0.0.1', '-p', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4_000);
  });
  let spawnError: Error | undefined;
  child.once('error', (error) => {
    spawnError = error;
  });

  const deadline = Date.now() + timeoutMs;
  while (!(await canConnect(port))) {
    if (spawnError || child.exitCode !== null) {
      throw new Error(
        `moto_server did not start (${spawnError?.message ?? `exit ${child.exitCode}`}). ` +
          `Run "bash scripts/python-tools.sh" or install moto[server]==5.2.1. ${stderr}`,
      );
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`moto_server did not listen on 127.0.0.1:${port} within ${timeoutMs} ms. ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  return motoOn(port, () => stopMotoProcess(child));
}

/** The moto server listening on `port` of 127.0.0.1, which `stop` stops. */
function motoOn(port: number, stop: () => Promise<void>): MotoServer {
  const endpoint = `http://127.0.0.1:${port}`;
  return { endpoint, port, awsEnv: { ...MOTO_AWS_ENV, AWS_ENDPOINT_URL: endpoint }, stop };
}

/** The environment variable by which globalSetup (shared-moto-setup.ts) tells each worker its moto's port. */
export const SHARED_MOTO_PORTS = 'PAYMENT_API_SHARED_MOTO_PORTS';

/** Whether moto answered its reset: a server still loading refuses the connection. */
async function reset(endpoint: string): Promise<boolean> {
  try {
    return (await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' })).ok;
  } catch {
    return false;
  }
}

/**
 * This worker's moto server, emptied: every secret, table and stack of the suites before is gone. For a suite that
 * needs one clean moto from its beforeAll to its afterAll and never stops it on purpose. `stop()` leaves the server
 * to the next suite of the worker (the run's globalTeardown stops it). Outside the integration project's run (no
 * shared server), a server of its own, as startMoto.
 */
export async function sharedMoto(timeoutMs = 30_000): Promise<MotoServer> {
  const ports = (process.env[SHARED_MOTO_PORTS] ?? '').split(',').filter(Boolean).map(Number);
  const worker = Number(process.env.JEST_WORKER_ID ?? '1');
  const port = ports[(worker - 1) % Math.max(1, ports.length)];
  if (port === undefined) return startMoto(timeoutMs);
  const shared = motoOn(port, () => Promise.resolve());
  const deadline = Date.now() + timeoutMs;
  while (!(await reset(shared.endpoint))) {
    if (Date.now() > deadline)
      throw new Error(`the shared moto_server on ${shared.endpoint} did not answer its reset`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return shared;
}

/**
 * Region, endpoint and credentials of an SDK client for the test process itself, pointed at moto (or a server in
 * its place).
 */
export function motoClientConfig(moto: { readonly endpoint: string }) {
  return {
    region: MOTO_AWS_ENV.AWS_REGION,
    endpoint: moto.endpoint,
    credentials: {
      accessKeyId: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
      secretAccessKey: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
    },
  };
}

/** An SDK client for the test process itself, pointed at the given moto server. */
export function motoSecretsManager(moto: MotoServer): SecretsManagerClient {
  return new SecretsManagerClient(motoClientConfig(moto));
}

/** Where the payment Lambda's small client sends its calls, and what it signs with, for an endpoint of moto's. */
export function motoAccess(endpoint: string) {
  return {
    target: { url: new URL(endpoint), region: MOTO_AWS_ENV.AWS_REGION },
    credentials: () =>
      Promise.resolve({
        accessKeyId: MOTO_AWS_ENV.AWS_ACCESS_KEY_ID,
        secretAccessKey: MOTO_AWS_ENV.AWS_SECRET_ACCESS_KEY,
      }),
  };
}

/**
 * The payment Lambda's key source for one secret in moto (or a proxy in front of it): its own small client with
 * EMULATOR_ATTEMPT_BOUNDS and the emulator's explicit budget, so it reads secrets exactly as the Lambda does.
 */
export function motoSecretSource(server: { readonly endpoint: string }, secretId: string): SecretSource {
  const client = createPaymentSecretsManagerClient(motoAccess(server.endpoint), EMULATOR_ATTEMPT_BOUNDS);
  return secretsManagerSource(secretId, client, EMULATOR_KEY_FETCH_BUDGET_MS);
}

/** A DynamoDB client for the test process itself, pointed at the given moto server. */
export function motoDynamoDb(moto: MotoServer): DynamoDBClient {
  return new DynamoDBClient(motoClientConfig(moto));
}

/**
 * Creates the per-app rate limiter's table in moto as the stack does (lib/rate-limit-table.ts): a string partition
 * key, on-demand, the TTL attribute. The first DynamoDB call loads moto's DynamoDB, so this also warms it.
 */
export async function createMotoRateLimitTable(moto: MotoServer, tableName: string): Promise<void> {
  const client = motoDynamoDb(moto);
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [{ AttributeName: COUNTER_TABLE.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: COUNTER_TABLE.partitionKey, KeyType: 'HASH' }],
      }),
    );
    await client.send(
      new UpdateTimeToLiveCommand({
        TableName: tableName,
        TimeToLiveSpecification: { AttributeName: COUNTER_TABLE.expiresAt, Enabled: true },
      }),
    );
  } finally {
    client.destroy();
  }
}

/** Creates a secret holding `secretString` with `client` (pointed at moto); returns its ARN. */
export async function createSecret(
  client: SecretsManagerClient,
  name: string,
  secretString: string,
): Promise<string> {
  const created = await client.send(new CreateSecretCommand({ Name: name, SecretString: secretString }));
  if (created.ARN === undefined) throw new Error(`moto returned no ARN for the secret ${name}`);
  return created.ARN;
}

/** The same, with a client of its own. */
export async function createMotoSecret(
  moto: MotoServer,
  name: string,
  secretString: string,
): Promise<string> {
  const client = motoSecretsManager(moto);
  try {
    return await createSecret(client, name, secretString);
  } finally {
    client.destroy();
  }
}

/**
 * Starts a scheduled rotation of `secretId` as Secrets Manager does, as far as moto does it: RotateSecret turns
 * rotation on and attaches AWSPENDING to an empty version named by `token`, then fails (ResourceNotFoundException,
 * checked here) on the rotation function, which moto does not host. The test then plays Secrets Manager's part by
 * invoking the four steps itself.
 */
export async function beginMotoRotation(
  client: SecretsManagerClient,
  secretId: string,
  token: string,
  rotateImmediately?: boolean,
): Promise<void> {
  const failure = await client
    .send(
      new RotateSecretCommand({
        SecretId: secretId,
        ClientRequestToken: token,
        RotationLambdaARN: 'arn:aws:lambda:us-east-1:123456789012:function:payment-api-rotation',
        RotationRules: { AutomaticallyAfterDays: 30 },
        ...(rotateImmediately === undefined ? {} : { RotateImmediately: rotateImmediately }),
      }),
    )
    .then(
      () => undefined,
      (error: unknown) => error,
    );
  if (!(failure instanceof ResourceNotFoundException)) {
    throw new Error(
      `RotateSecret on an unhosted function should fail as not found, not with ${String(failure)}`,
    );
  }
}

/** How many calls of one command a client has made: each call once, however many attempts it took. */
export interface CommandCount {
  readonly calls: () => number;
  readonly reset: () => void;
}

/** Counts `client`'s calls of the command named `commandName` (`PutSecretValueCommand`, ...) from now on. */
export function countCommands(client: SecretsManagerClient, commandName: string): CommandCount {
  let calls = 0;
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === commandName) calls += 1;
      return next(args);
    },
    { step: 'initialize', name: `count${commandName}` },
  );
  return {
    calls: () => calls,
    reset: () => {
      calls = 0;
    },
  };
}
