/**
 * `npm start` on a key registry of several shards, end to end: a local registry (registry.json and its shard files,
 * made and edited by the key CLI as a separate process), and a registry in Secrets Manager (moto), named by its
 * manifest secret or by its stack. The server reads them through the payment Lambda's ShardedKeys. No 401 during a
 * reshard is proved end to end once, by test/integration/keys/reshard-served.test.ts (the built Lambda, the CLI
 * against moto); the fallback rule under every timing is sharded-keys.test.ts's property test, a local registry's
 * reshard is test/unit/tools/keys/registry-file.test.ts's, and the server re-reading a changed manifest is
 * test/unit/tools/local-server/registry-keys.test.ts's.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListSecretsCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DescribeStacksCommand, type CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { SUCCESS_BODY } from '../../../shared/api/responses';
import { shardOf } from '../../../shared/keys/shard';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../../../tools/common/aws-clients';
import { keysHandedOut, runCli, spawnCli } from '../../support/keys-cli';
import {
  credentials,
  killAllLocalServers,
  send,
  SETUP_TIMEOUT_MS,
  spawnNpmStart,
  startLocalServer,
  stopLocalServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { freeLoopbackPort } from '../../support/loopback';
import { EMULATOR_CALL_BOUNDS, sharedMoto, type MotoServer } from '../../support/moto';
import { createMotoRegistry, type MotoRegistry } from '../../support/registry-moto';
import { spawnTool } from '../../support/tool-process';

afterAll(() => {
  killAllLocalServers();
});

const APPS = Array.from({ length: 24 }, (_, index) => `partner-${String(index).padStart(2, '0')}`);

/** An apply file adding `apps`; demo's key stored as itself ("plain"), for the banner's ready command to read. */
const addAll = (apps: readonly string[]): string =>
  JSON.stringify({
    changes: apps.map((app) => ({ op: 'add', app, ...(app === 'demo' ? { plain: true } : {}) })),
  });

function occurrences(text: string, fragment: string): number {
  return text.split(fragment).length - 1;
}

describe('npm start on a local registry of several shards (KEYS_REGISTRY_FILE)', () => {
  let directory: string;
  let registryFile: string;
  let keys: Map<string, string>;
  let server: LocalServerProcess;

  const shardFile = (index: number) => join(directory, 'registry', `keys-${index}.json`);

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'payment-api-registry-'));
    registryFile = join(directory, 'registry', 'registry.json');
    const changes = join(directory, 'changes.json');
    await writeFile(changes, addAll(['demo', ...APPS]));
    const target = ['--registry-file', registryFile];
    expect((await runCli(['init', '--shards', '4', ...target], {})).code).toBe(0);
    const applied = await runCli(
      ['apply', changes, '--keys-out', join(directory, 'keys.jsonl'), ...target],
      {},
    );
    expect(applied.code).toBe(0);
    keys = keysHandedOut(await readFile(join(directory, 'keys.jsonl'), 'utf8'));
    // The default TTL (60 s): whatever works at once below works because the files are watched.
    server = await startLocalServer({
      PORT: String(await freeLoopbackPort()),
      KEYS_REGISTRY_FILE: registryFile,
    });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await stopLocalServer(server);
    await rm(directory, { recursive: true, force: true });
  });

  it("says which registry and how many shards, and its ready command sends demo's key from its shard file to curl", async () => {
    // Arrange
    const lines = server.output().split('\n');
    const command = lines[lines.findIndex((line) => line.startsWith('try (')) + 1]?.trim() ?? '';

    // Act
    const run = await spawnTool('bash', ['-c', command], {});

    // Assert
    expect(server.output()).toContain(
      `keys: registry file ${registryFile}, 4 shards, each of its files re-read as soon as it changes (and every 60 s)`,
    );
    expect(server.output()).toContain(
      `try (app demo's key goes from shard ${shardOf('demo', 4)}'s file to curl on standard input, never on a command line):`,
    );
    expect(command).toContain(`require(${JSON.stringify(shardFile(shardOf('demo', 4)))})["demo"]`);
    expect(run.stdout).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(run.stdout).toContain(JSON.stringify(SUCCESS_BODY));
  });

  it('serves every app from its shard', async () => {
    // Act
    const statuses = await Promise.all(
      APPS.map(
        async (app) =>
          (await send(server.baseUrl, { headers: credentials(app, keys.get(app) ?? '') })).status,
      ),
    );

    // Assert
    expect(statuses).toEqual(APPS.map(() => 200));
    expect(new Set(APPS.map((app) => shardOf(app, 4)))).toEqual(new Set([0, 1, 2, 3]));
  });

  it('accepts an app added with the key CLI at once, its TTL far from over', async () => {
    // Act: the CLI as a separate process, writing the app's shard file.
    const added = await spawnCli(['add-app', 'newcomer', '--registry-file', registryFile], {});
    const key = added.stdout.split('\n')[0] ?? '';
    const reply = await send(server.baseUrl, { headers: credentials('newcomer', key) });

    // Assert
    expect(added.code).toBe(0);
    expect(reply.status).toBe(200);
    keys.set('newcomer', key);
  });

  it('never prints a key', () => {
    for (const key of keys.values()) expect(occurrences(server.output(), key)).toBe(0);
    expect(server.output()).not.toMatch(/payk_[A-Za-z0-9_-]{43}|pay_[0-9A-Za-z]{38}/);
  });
});

describe('npm start on a registry file that does not exist', () => {
  it('exits 1 with one line saying how to create one', async () => {
    // Arrange
    const directory = await mkdtemp(join(tmpdir(), 'payment-api-registry-'));
    const registryFile = join(directory, 'registry.json');

    try {
      // Act
      const run = spawnNpmStart({ PORT: '0', KEYS_REGISTRY_FILE: registryFile });
      const code = await run.exited;

      // Assert
      expect(code).toBe(1);
      expect(
        run
          .stderr()
          .split('\n')
          .filter((line) => line.startsWith('payment-api local server')),
      ).toEqual([
        `payment-api local server: cannot set up the keys: registry file ${registryFile} does not exist: ` +
          `npm run keys -- init --shards <n> --registry-file '${registryFile}' creates one`,
      ]);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});

describe('npm start on a key registry in Secrets Manager (moto: KEYS_REGISTRY, KEYS_STACK)', () => {
  let moto: MotoServer;
  let admin: SecretsManagerClient;
  let cloudFormation: CloudFormationClient;
  let directory: string;
  let registry: MotoRegistry;
  let keys: Map<string, string>;
  let server: LocalServerProcess;
  const TTL_SECONDS = 1;

  beforeAll(async () => {
    moto = await sharedMoto();
    admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
    cloudFormation = createOperatorCloudFormationClient(admin, moto.awsEnv, EMULATOR_CALL_BOUNDS);
    // moto loads each service on its first call, for seconds: done here, once.
    await admin.send(new ListSecretsCommand({}));
    await cloudFormation.send(new DescribeStacksCommand({}));
    registry = await createMotoRegistry(
      { secretsManager: admin, cloudFormation },
      { shards: 4, keyCacheTtlSeconds: TTL_SECONDS },
    );
    directory = await mkdtemp(join(tmpdir(), 'payment-api-registry-'));
    await writeFile(join(directory, 'changes.json'), addAll(['demo', ...APPS]));
    const applied = await runCli(
      [
        'apply',
        join(directory, 'changes.json'),
        '--keys-out',
        join(directory, 'keys.jsonl'),
        '--registry',
        registry.manifestName,
      ],
      moto.awsEnv,
      { awsCallBounds: EMULATOR_CALL_BOUNDS },
    );
    expect(applied.code).toBe(0);
    keys = keysHandedOut(await readFile(join(directory, 'keys.jsonl'), 'utf8'));
    server = await startLocalServer({
      ...moto.awsEnv,
      PORT: String(await freeLoopbackPort()),
      KEYS_REGISTRY: registry.manifestName,
      KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS),
    });
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await stopLocalServer(server);
    admin.destroy();
    cloudFormation.destroy();
    await moto.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it("names the manifest secret and its shards, and the secret of demo's shard, printing no key", async () => {
    // Act
    const reply = await send(server.baseUrl, { headers: credentials('demo', keys.get('demo') ?? '') });

    // Assert
    expect(server.output()).toContain(
      `keys: key registry ${registry.manifestName} in Secrets Manager, 4 shards (region ${moto.awsEnv.AWS_REGION}, endpoint ${moto.endpoint}), each shard and the manifest re-read every 1 s`,
    );
    const demoShard = shardOf('demo', 4);
    expect(server.output()).toContain(
      `try, with APP_KEY set to a key of app demo from Secrets Manager secret ${registry.layout.shardIds[demoShard] ?? ''} (shard ${demoShard}):`,
    );
    expect(reply.status).toBe(200);
  });

  it("serves the stack's registry with KEYS_STACK, found from the stack's outputs", async () => {
    // Arrange
    const byStack = await startLocalServer({
      ...moto.awsEnv,
      PORT: String(await freeLoopbackPort()),
      KEYS_STACK: registry.stackName,
      KEY_CACHE_TTL_SECONDS: String(TTL_SECONDS),
    });

    try {
      // Act
      const statuses = await Promise.all(
        APPS.map(
          async (app) =>
            (await send(byStack.baseUrl, { headers: credentials(app, keys.get(app) ?? '') })).status,
        ),
      );

      // Assert
      expect(byStack.output()).toContain(
        `keys: stack ${registry.stackName}'s key registry ${registry.manifestName} in Secrets Manager, 4 shards`,
      );
      expect(statuses).toEqual(APPS.map(() => 200));
    } finally {
      await stopLocalServer(byStack);
    }
  });

  it('never prints a key', () => {
    for (const key of keys.values()) expect(occurrences(server.output(), key)).toBe(0);
  });
});
