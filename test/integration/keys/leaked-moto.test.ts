/**
 * `keys leaked` against moto's Secrets Manager and CloudFormation, through the proxy that refuses what AWS would and
 * counts the calls: keys found in several shards are ended with one compare-and-swap write per shard touched,
 * --rotate --grace hands out keys with the stack's prefix; and no leaked key appears in any line the CLI prints. A
 * key not found (exit 3, nothing written for it) is test/unit/tools/keys/leaked.test.ts's, and on moto the golden's
 * "leaked, one not found" (cli-golden.test.ts); its leaked steps on moto-1 are leaked on a registry of one secret,
 * which a stack without a KeyRegistry output opens as --secret-id does.
 */
import { Readable } from 'node:stream';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { authenticate } from '../../../shared/keys/authenticate';
import { generatePrefixedKey } from '../../../shared/keys/key-format';
import { serializeKeyDocument, type DocumentApp, type KeyDocument } from '../../../shared/keys/key-document';
import { toCompactDigestForm, toDigestForm } from '../../../shared/keys/key-material';
import { parseKeyring } from '../../../shared/keys/keyring';
import { shardOf } from '../../../shared/keys/shard';
import { runCli, type CliResult } from '../../support/keys-cli';
import { EMULATOR_CALL_BOUNDS } from '../../support/moto';
import {
  createMotoRegistry,
  shardDocuments,
  type MotoClients,
  type MotoRegistry,
} from '../../support/registry-moto';
import { startRulesRegistryMoto, type RulesRegistryMoto } from '../../support/rules-registry-moto';
import type { SecretsManagerRulesProxy } from '../../support/secrets-manager-rules';

const SHARDS = 8;

let proxy: SecretsManagerRulesProxy;
let admin: SecretsManagerClient;
let clients: Required<MotoClients>;
let env: Record<string, string>;
/** Every output line of every run, to check at the end that none holds a key. */
const printed: string[] = [];

let harness: RulesRegistryMoto;

beforeAll(async () => {
  harness = await startRulesRegistryMoto();
  ({ proxy, admin, clients, env } = harness);
});

afterAll(() => harness.stop());

/** 40 apps in 8 shards, each with one key: stored as d: (most), sha256: (every fifth) or plain (every seventh). */
function seededApps(): { readonly keys: Map<string, string>; readonly texts: string[] } {
  const keys = new Map<string, string>();
  const documents = Array.from({ length: SHARDS }, (): Map<string, DocumentApp> => new Map());
  for (let index = 0; index < 40; index++) {
    const appId = `partner-${String(index).padStart(2, '0')}`;
    const key = generatePrefixedKey('pay');
    keys.set(appId, key);
    const stored = index % 7 === 0 ? key : index % 5 === 0 ? toDigestForm(key) : toCompactDigestForm(key);
    documents[shardOf(appId, SHARDS)]?.set(appId, { keys: [{ stored }] });
  }
  return { keys, texts: documents.map((document) => serializeKeyDocument(document)) };
}

async function seededRegistry(extraOutputs?: Record<string, string>) {
  const { keys, texts } = seededApps();
  const registry = await createMotoRegistry(clients, {
    shards: SHARDS,
    texts,
    ...(extraOutputs === undefined ? {} : { extraOutputs }),
  });
  return { keys, registry };
}

/** Apps of the registry in distinct shards (`count` of them), and one more sharing the first one's shard. */
function spreadApps(keys: ReadonlyMap<string, string>, count: number): string[] {
  const byShard = new Map<number, string[]>();
  for (const appId of keys.keys()) {
    const shard = shardOf(appId, SHARDS);
    byShard.set(shard, [...(byShard.get(shard) ?? []), appId]);
  }
  const groups = [...byShard.values()];
  const first = groups[0] ?? [];
  return [...groups.slice(0, count).map((group) => group[0] ?? ''), first[1] ?? ''];
}

async function leaked(argv: readonly string[], stdin: string): Promise<CliResult> {
  const result = await runCli(argv, env, {
    awsCallBounds: EMULATOR_CALL_BOUNDS,
    stdin: () => Readable.from([stdin]),
  });
  printed.push(...`${result.stdout}${result.stderr}`.split('\n'));
  return result;
}

function serves(documents: ReadonlyMap<number, KeyDocument>, appId: string, key: string, now = Date.now()) {
  const document = documents.get(shardOf(appId, SHARDS)) ?? new Map();
  return authenticate({ appId, appKey: key }, parseKeyring(serializeKeyDocument(document)).keyring, {
    now,
    sourceIp: '203.0.113.9',
  }).ok;
}

const putsSince = (since: number): string[] =>
  proxy.calls
    .slice(since)
    .filter((call) => call.operation === 'PutSecretValue')
    .map((call) => call.secretId ?? '');

const shardIdsOf = (registry: MotoRegistry, apps: readonly string[]): string[] =>
  [...new Set(apps.map((appId) => shardOf(appId, SHARDS)))]
    .sort((a, b) => a - b)
    .map((index) => registry.manifest.shardIds[index] ?? '');

describe('keys leaked', () => {
  it('finds keys in several shards in one BatchGetSecretValue, and revokes them with one write per shard touched', async () => {
    const { keys, registry } = await seededRegistry();
    const apps = spreadApps(keys, 3);
    const since = proxy.calls.length;

    const result = await leaked(
      ['leaked', '--stack', registry.stackName],
      apps.map((appId) => keys.get(appId)).join('\n') + '\n',
    );

    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(proxy.count('BatchGetSecretValue', since)).toBe(1);
    expect(putsSince(since).sort()).toEqual(shardIdsOf(registry, apps).sort());
    expect(result.stdout).toMatch(/\n4 keys: 4 found \(4 apps\), 0 not found; 3 shards written\n$/);
    const after = await shardDocuments(admin, registry.manifest);
    for (const [appId, key] of keys) expect(serves(after, appId, key)).toBe(!apps.includes(appId));
  });

  it("--rotate --grace gives each app a new key with the stack's prefix, the leaked one valid for the grace", async () => {
    const { keys, registry } = await seededRegistry({ KeyPrefix: 'acme_live' });
    const apps = spreadApps(keys, 2);
    const since = proxy.calls.length;

    const result = await leaked(
      ['leaked', '--rotate', '--grace', '1h', '--stack', registry.stackName],
      apps.map((appId) => keys.get(appId)).join('\n'),
    );

    expect(result.code).toBe(0);
    const handedOut = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { appId: string; keyId: string; key: string });
    expect(handedOut.map((line) => line.appId).sort()).toEqual([...apps].sort());
    for (const line of handedOut) expect(line.key).toMatch(/^acme_live_[0-9A-Za-z]{38}$/);
    expect(result.stderr.match(/: rotated: new key [0-9a-f]{12}; the leaked key expires at /g)).toHaveLength(
      3,
    );
    expect(putsSince(since)).toHaveLength(2);
    const after = await shardDocuments(admin, registry.manifest);
    const inAnHour = Date.now() + 3_600_000 + 1_000;
    for (const { appId, key } of handedOut) {
      expect(serves(after, appId, keys.get(appId) ?? '')).toBe(true);
      expect(serves(after, appId, keys.get(appId) ?? '', inAnHour)).toBe(false);
      expect(serves(after, appId, key, inAnHour)).toBe(true);
      const stored = JSON.stringify(Object.fromEntries(after.get(shardOf(appId, SHARDS)) ?? new Map()));
      expect(stored).not.toContain(key);
    }
  });

  it('printed no key in any line of any run', () => {
    expect(printed.length).toBeGreaterThan(10);
    for (const line of printed) {
      expect(line).not.toMatch(/pay_[0-9A-Za-z]{38}/);
    }
  });
});
