/**
 * The key CLI on registries of several shards, against moto's Secrets Manager and CloudFormation, through a proxy
 * that refuses what AWS would (a value over 65,536 bytes, a version past the quota) and counts the calls.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeSecretCommand,
  PutSecretValueCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { authenticate } from '../../../shared/keys/authenticate';
import { serializeKeyDocument, type KeyDocument } from '../../../shared/keys/key-document';
import { parseKeyring } from '../../../shared/keys/keyring';
import { shardsToSearch } from '../../../shared/keys/registry';
import { shardOf } from '../../../shared/keys/shard';
import { createOperatorSecretsManagerClient } from '../../../tools/common/aws-clients';
import { CLI_STAGING_LABEL } from '../../../tools/keys/secrets-manager-store';
import { digestKeyIdOf, keysHandedOut, runCli as runCliWithBounds } from '../../support/keys-cli';
import { EMULATOR_CALL_BOUNDS } from '../../support/moto';
import {
  createMotoRegistry,
  deployShards,
  shardDocuments,
  type MotoClients,
  type MotoRegistry,
} from '../../support/registry-moto';
import { startRulesRegistryMoto, type RulesRegistryMoto } from '../../support/rules-registry-moto';
import type { SecretsManagerRulesProxy } from '../../support/secrets-manager-rules';

let proxy: SecretsManagerRulesProxy;
let admin: SecretsManagerClient;
let clients: Required<MotoClients>;
let directory: string;
/** The CLI's environment: Secrets Manager through the proxy, CloudFormation straight to moto. */
let env: Record<string, string>;

let harness: RulesRegistryMoto;

beforeAll(async () => {
  harness = await startRulesRegistryMoto();
  ({ proxy, admin, clients, env } = harness);
});

afterAll(() => harness.stop());

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'keys-registry-'));
});

afterEach(() => {
  rmSync(directory, { recursive: true, force: true });
});

const keysCli = (argv: readonly string[], extra: Parameters<typeof runCliWithBounds>[2] = {}) =>
  runCliWithBounds(argv, env, { awsCallBounds: EMULATOR_CALL_BOUNDS, ...extra });

/**
 * Whether the Lambda would accept `appKey` for `appId` from what the shards hold: it looks in shardsToSearch and
 * takes the first copy it finds.
 */
function acceptor(registry: MotoRegistry, documents: ReadonlyMap<number, KeyDocument>) {
  const keyrings = new Map(
    [...documents].map(([index, document]) => [index, parseKeyring(serializeKeyDocument(document)).keyring]),
  );
  return (appId: string, appKey: string): boolean => {
    const index = shardsToSearch(registry.manifest, appId).find((i) => documents.get(i)?.has(appId));
    const keyring = index === undefined ? undefined : keyrings.get(index);
    return (
      keyring !== undefined &&
      authenticate({ appId, appKey }, keyring, { now: Date.now(), sourceIp: '203.0.113.9' }).ok
    );
  };
}

async function served(registry: MotoRegistry, appId: string, appKey: string): Promise<boolean> {
  return acceptor(registry, await shardDocuments(admin, registry.manifest))(appId, appKey);
}

function applyFile(changes: readonly object[]): string {
  const file = join(directory, `changes-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify({ changes }, null, 2));
  return file;
}

const keysFromFile = (path: string): Map<string, string> => keysHandedOut(readFileSync(path, 'utf8'));

const appIds = (count: number, prefix = 'partner') =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);

describe('the key CLI on a registry of shards (moto)', () => {
  it('--stack finds the shards from the stack: add-app writes the app home, rotate finds it, list reads all', async () => {
    const registry = await createMotoRegistry(clients, { shards: 8 });
    const stack = ['--stack', registry.stackName];

    const added = [];
    for (const app of ['alpha', 'bravo', 'charlie'])
      added.push(await keysCli(['add-app', app, '--json', ...stack]));
    const rotated = await keysCli(['rotate', 'bravo', '--json', ...stack]);
    const before = proxy.calls.length;
    const listed = await keysCli(['list', '--json', ...stack]);

    expect([...added, rotated].map((result) => [result.code, result.stderr])).toEqual(
      Array.from({ length: 4 }, () => [0, '']),
    );
    const documents = await shardDocuments(admin, registry.manifest);
    for (const app of ['alpha', 'bravo', 'charlie']) {
      expect([...documents].filter(([, document]) => document.has(app)).map(([index]) => index)).toEqual([
        shardOf(app, 8),
      ]);
    }
    const keyOf = (result: { stdout: string }) => (JSON.parse(result.stdout) as { key: string }).key;
    expect(await served(registry, 'bravo', keyOf(rotated))).toBe(true);
    expect(await served(registry, 'alpha', keyOf(added[0] ?? { stdout: '{}' }))).toBe(true);
    expect(listed.code).toBe(0);
    expect(
      (JSON.parse(listed.stdout) as { appId: string; keyIds: string[] }[]).map(({ appId, keyIds }) => [
        appId,
        keyIds.length,
      ]),
    ).toEqual([
      ['alpha', 1],
      ['bravo', 2],
      ['charlie', 1],
    ]);
    // list: the manifest, then all 8 shards in one BatchGetSecretValue.
    expect(proxy.calls.slice(before, before + 2).map((call) => call.operation)).toEqual([
      'GetSecretValue',
      'BatchGetSecretValue',
    ]);
  });

  it('a CLI edit during a scheduled rotation leaves the rotation its AWSPENDING version', async () => {
    const registry = await createMotoRegistry(clients, {
      shards: 1,
      texts: [JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] })],
    });
    const secretId = registry.manifest.shardIds[0] ?? '';
    const pending = await admin.send(
      new PutSecretValueCommand({
        SecretId: secretId,
        SecretString: '{"rotating":["test-rotation-key-0123456789"]}',
        VersionStages: ['AWSPENDING'],
      }),
    );

    const rotated = await keysCli(['rotate', 'demo', '--secret-id', secretId]);

    const { VersionIdsToStages = {} } = await admin.send(new DescribeSecretCommand({ SecretId: secretId }));
    expect(rotated.code).toBe(0);
    expect(VersionIdsToStages[pending.VersionId ?? '']).toEqual(['AWSPENDING']);
    expect(Object.values(VersionIdsToStages).flat()).not.toContain(CLI_STAGING_LABEL);
  });
});

describe('apply (moto)', () => {
  it('adds 300 apps, rotates, revokes and removes with one PutSecretValue per shard touched; keys go to a 0600 file', async () => {
    const registry = await createMotoRegistry(clients, { shards: 8 });
    const stack = ['--stack', registry.stackName];
    const apps = appIds(300);
    const seed = await keysCli([
      'apply',
      applyFile(apps.map((app) => ({ op: 'add', app }))),
      '--keys-out',
      join(directory, 'seed.jsonl'),
      ...stack,
    ]);
    const seedKeys = keysFromFile(join(directory, 'seed.jsonl'));
    const revoked = digestKeyIdOf(seedKeys.get('partner-0002') ?? '');
    const since = proxy.calls.length;

    const result = await keysCli([
      'apply',
      applyFile([
        {
          op: 'add',
          app: 'newcomer',
          expiresIn: '90d',
          allowedCidrs: ['203.0.113.0/24'],
          rateLimit: { perSecond: 20, burst: 40 },
        },
        { op: 'rotate', app: 'partner-0001', grace: '7d' },
        { op: 'revoke', app: 'partner-0002', keyId: revoked, force: true },
        { op: 'remove', app: 'partner-0003' },
      ]),
      '--keys-out',
      join(directory, 'new.jsonl'),
      ...stack,
    ]);

    expect(seed.code).toBe(0);
    expect(seedKeys.size).toBe(300);
    expect(statSync(join(directory, 'seed.jsonl')).mode & 0o777).toBe(0o600);
    const touched = new Set(
      ['newcomer', 'partner-0001', 'partner-0002', 'partner-0003'].map((app) => shardOf(app, 8)),
    );
    expect(result.code).toBe(0);
    expect(proxy.count('PutSecretValue', since)).toBe(touched.size);
    expect(result.stdout.trim().split('\n')).toHaveLength(touched.size + 1);
    const fresh = keysFromFile(join(directory, 'new.jsonl'));
    expect([...fresh.keys()].sort()).toEqual(['newcomer', 'partner-0001']);
    expect(await served(registry, 'newcomer', fresh.get('newcomer') ?? '')).toBe(true);
    expect(await served(registry, 'partner-0001', fresh.get('partner-0001') ?? '')).toBe(true);
    expect(await served(registry, 'partner-0001', seedKeys.get('partner-0001') ?? '')).toBe(true);
    expect(await served(registry, 'partner-0002', seedKeys.get('partner-0002') ?? '')).toBe(false);
    expect(await served(registry, 'partner-0003', seedKeys.get('partner-0003') ?? '')).toBe(false);
    expect(await served(registry, 'partner-0299', seedKeys.get('partner-0299') ?? '')).toBe(true);
  });

  it('refuses a bad file whole, with no call to Secrets Manager', async () => {
    const registry = await createMotoRegistry(clients, { shards: 4 });
    const pastedKey = 'payk_' + 'Q'.repeat(43);
    const file = join(directory, 'bad.json');
    writeFileSync(
      file,
      [
        '{"changes": [',
        '  {"op": "add", "app": "shop"},',
        `  {"op": "add", "app": "${pastedKey}"},`,
        '  {"op": "add", "app": "shop"},',
        '  {"op": "add", "app": "x", "colour": "red"}',
        ']}',
      ].join('\n'),
    );
    const since = proxy.calls.length;

    const result = await keysCli([
      'apply',
      file,
      '--keys-out',
      join(directory, 'k.jsonl'),
      '--registry',
      registry.manifestName,
    ]);

    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/ has 3 problems; nothing was applied, nothing was written\n$/);
    expect(proxy.calls.length).toBe(since);
  });

  it('refuses, before any write, a shard whose version quota a write would pass, saying until when', async () => {
    const registry = await createMotoRegistry(clients, { shards: 4 });
    const full = shardOf('late-partner', 4);
    const secretId = registry.manifest.shardIds[full] ?? '';
    // The shard already gained 100 versions today (its first one included).
    for (let i = 1; i < 100; i++) {
      await admin.send(
        new PutSecretValueCommand({ SecretId: secretId, SecretString: '{}', VersionStages: ['filler'] }),
      );
    }
    const since = proxy.calls.length;

    const result = await keysCli([
      'apply',
      applyFile([{ op: 'add', app: 'late-partner' }]),
      '--keys-out',
      join(directory, 'k.jsonl'),
      '--stack',
      registry.stackName,
    ]);

    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: shard ${full} \\(secret .*\\) already holds 100 versions Secrets Manager keeps \\(100 made in the last 24 hours\\), ` +
          'and it refuses a version past 100 until one is 24 hours old, so this write would fail; nothing was written: ' +
          'batch changes into one write per shard with "apply", or wait until \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\n',
      ),
    );
    expect(proxy.count('PutSecretValue', since)).toBe(0);
    // What the CLI spared the operator: Secrets Manager (the proxy) refuses the 101st version.
    const direct = createOperatorSecretsManagerClient(env, EMULATOR_CALL_BOUNDS);
    await expect(
      direct.send(new PutSecretValueCommand({ SecretId: secretId, SecretString: '{}' })),
    ).rejects.toMatchObject({
      name: 'LimitExceededException',
    });
    direct.destroy();
  });
});

describe('reshard (moto)', () => {
  /** A registry of 4 shards holding `count` apps, then deployed as 8 with 4 before: a reshard under way. */
  async function grownRegistry(
    count: number,
  ): Promise<{ registry: MotoRegistry; keys: Map<string, string> }> {
    const small = await createMotoRegistry(clients, { shards: 4 });
    const keysOut = join(directory, 'seed.jsonl');
    const seeded = await keysCli([
      'apply',
      applyFile(appIds(count).map((app) => ({ op: 'add', app }))),
      '--keys-out',
      keysOut,
      '--stack',
      small.stackName,
    ]);
    expect(seeded.code).toBe(0);
    return { registry: await deployShards(admin, small, 8, 4), keys: keysFromFile(keysOut) };
  }

  // That no request for any app is refused while a reshard runs is proven on the built payment Lambda, in several
  // execution environments asking for every app in a loop: test/integration/keys/reshard-served.test.ts (stopped
  // halfway and run again included). Here: the CLI's own contract.
  it('copies, waits the key cache TTL plus a margin, removes: one write per shard and phase, every app home', async () => {
    const { registry, keys } = await grownRegistry(200);
    const stack = ['--stack', registry.stackName];
    const settles: number[] = [];
    const since = proxy.calls.length;

    const result = await keysCli(['reshard', ...stack], {
      sleep: (ms) => {
        settles.push(ms);
        return Promise.resolve();
      },
    });

    const documents = await shardDocuments(admin, registry.manifest);
    const moved = [...keys.keys()].filter((app) => shardOf(app, 8) !== shardOf(app, 4));
    const targets = new Set(moved.map((app) => shardOf(app, 8)));
    const sources = new Set(moved.map((app) => shardOf(app, 4)));
    expect(result.code).toBe(0);
    expect(settles).toEqual([90_000]);
    for (const app of keys.keys()) {
      expect([...documents].filter(([, document]) => document.has(app)).map(([index]) => index)).toEqual([
        shardOf(app, 8),
      ]);
    }
    expect(proxy.count('PutSecretValue', since)).toBe(targets.size + sources.size);
    expect(result.stdout).toContain(`moved ${moved.length} apps home`);

    const again = await keysCli(['reshard', ...stack]);
    const listed = await keysCli(['list', ...stack]);
    expect(again).toEqual({
      code: 0,
      stdout:
        'every app is in its home under 8 shards: nothing to move\nnothing is left to move\nnow deploy without keyShardsPrevious (-c keyShards=8): readers need not look in the old homes any more\n',
      stderr: '',
    });
    expect(listed.stderr).toBe('');
  });

  it('an app edited in its old home while it was being copied keeps the edit', async () => {
    const { registry, keys } = await grownRegistry(40);
    const stack = ['--stack', registry.stackName];
    const moving = [...keys.keys()].find((app) => shardOf(app, 8) !== shardOf(app, 4)) ?? '';
    const oldHome = registry.manifest.shardIds[shardOf(moving, 4)] ?? '';

    const result = await keysCli(['reshard', ...stack], {
      // During the settle, a writer that had found the app in its old home before the copy landed writes there.
      sleep: async () => {
        const edited = await runCliWithBounds(
          ['limit', moving, '--per-second', '5', '--secret-id', oldHome],
          env,
          {
            awsCallBounds: EMULATOR_CALL_BOUNDS,
          },
        );
        expect(edited.code).toBe(0);
      },
    });

    const documents = await shardDocuments(admin, registry.manifest);
    expect(result.stdout).toContain(`app ${moving} was edited in its old home during the move`);
    expect(documents.get(shardOf(moving, 8))?.get(moving)?.rateLimit).toEqual({ perSecond: 5 });
    expect(documents.get(shardOf(moving, 4))?.has(moving)).toBe(false);
  });
});
