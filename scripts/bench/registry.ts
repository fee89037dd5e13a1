/**
 * The key registry over several secrets (issue 16): `apply` of 10,000 new apps into 64 shards against moto,
 * through the proxy that refuses what Secrets Manager refuses and counts the calls; and how many apps shards hold,
 * placed by shardOf as every reader places them.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListSecretsCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { serializeKeyDocument, type DocumentApp, type KeyDocument } from '../../shared/keys/key-document';
import { generateKey } from '../../shared/keys/key-material';
import { SECRET_MAX_BYTES, SECRET_WARNING_FILL_PERCENT } from '../../shared/keys/secret-size';
import { shardOf } from '../../shared/keys/shard';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../../tools/common/aws-clients';
import { runCli } from '../../test/support/keys-cli';
import { EMULATOR_CALL_BOUNDS, type MotoServer } from '../../test/support/moto';
import { createMotoRegistry } from '../../test/support/registry-moto';
import { startSecretsManagerRules } from '../../test/support/secrets-manager-rules';
import { heaviestApp } from './secret-size';
import { fmt } from './stats';

/** App ids as operators write them, 12 characters, as the single-secret figures were measured (secret-size.ts). */
const appId = (index: number): string => `app-${String(index).padStart(8, '0')}`;

const oneKey = (): DocumentApp => ({ keys: [{ stored: generateKey() }] });

/** `apps` apps of one shape placed in `shards` shards by shardOf: each shard's document. */
function placedDocuments(apps: number, shards: number, shape: () => DocumentApp): Map<number, KeyDocument> {
  const documents = new Map<number, Map<string, DocumentApp>>();
  for (let index = 0; index < apps; index++) {
    const id = appId(index);
    const shard = shardOf(id, shards);
    const document = documents.get(shard) ?? new Map<string, DocumentApp>();
    document.set(id, shape());
    documents.set(shard, document);
  }
  return documents;
}

function fills(documents: ReadonlyMap<number, KeyDocument>): number[] {
  return [...documents.values()].map((document) => Buffer.byteLength(serializeKeyDocument(document)));
}

/**
 * The most apps of one plain key that `shards` shards hold with no shard over `limitBytes`, adding apps in order
 * (so the fullest shard decides, as it does in a deployment). Entry sizes are added, not re-serialized: an entry
 * `"id":["key"]` plus the comma between entries, in braces.
 */
function mostOneKeyApps(shards: number, limitBytes: number): number {
  const bytes = new Array<number>(shards).fill(2);
  const counts = new Array<number>(shards).fill(0);
  for (let index = 0; ; index++) {
    const id = appId(index);
    const shard = shardOf(id, shards);
    const entry = serializeKeyDocument(new Map([[id, oneKey()]])).length - 2 + (counts[shard] === 0 ? 0 : 1);
    if ((bytes[shard] ?? 0) + entry > limitBytes) return index;
    bytes[shard] = (bytes[shard] ?? 0) + entry;
    counts[shard] = (counts[shard] ?? 0) + 1;
  }
}

const percent = (bytes: number): string => `${fmt((bytes / SECRET_MAX_BYTES) * 100)}%`;

export async function registryLines(moto: MotoServer): Promise<string[]> {
  const lines: string[] = ['Key registry over several secrets:'];

  // Capacity, computed and then stored through the proxy (which refuses a value over 65,536 bytes).
  const heavy = placedDocuments(10_000, 64, heaviestApp);
  const heavyFills = fills(heavy);
  const proxy = await startSecretsManagerRules(moto.port);
  const env = { ...moto.awsEnv, AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint };
  const admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  const cloudFormation = createOperatorCloudFormationClient(admin, moto.awsEnv, EMULATOR_CALL_BOUNDS);
  const viaProxy = createOperatorSecretsManagerClient(env, EMULATOR_CALL_BOUNDS);
  const work = mkdtempSync(join(tmpdir(), 'bench-registry-'));
  try {
    await admin.send(new ListSecretsCommand({}));
    await cloudFormation.send(new DescribeStacksCommand({}));
    const capacity = await createMotoRegistry({ secretsManager: admin, cloudFormation }, { shards: 64 });
    let stored = 0;
    for (const [index, document] of heavy) {
      await viaProxy.send(
        new PutSecretValueCommand({
          SecretId: capacity.manifest.shardIds[index],
          SecretString: serializeKeyDocument(document),
        }),
      );
      stored++;
    }
    const heavyBytes = Buffer.byteLength(serializeKeyDocument(new Map([[appId(0), heaviestApp()]]))) - 2;
    lines.push(
      `- 10,000 apps of the heaviest shape (two digests mid-rotation, one expiring, an allowlist of two blocks; ` +
        `${heavyBytes} bytes each) in 64 shards: fullest shard ${percent(Math.max(...heavyFills))} ` +
        `(${Math.max(...heavyFills).toLocaleString('en')} bytes), emptiest ${percent(Math.min(...heavyFills))}, ` +
        `mean ${percent(heavyFills.reduce((a, b) => a + b, 0) / heavyFills.length)}; target: no shard above ` +
        `${SECRET_WARNING_FILL_PERCENT}%. All ${stored} shards stored through the size-enforcing proxy.`,
    );
    const warningBytes = Math.floor((SECRET_MAX_BYTES * SECRET_WARNING_FILL_PERCENT) / 100);
    lines.push(
      `- one-key apps (one plain generated key) in 256 shards: ${mostOneKeyApps(256, SECRET_MAX_BYTES).toLocaleString('en')} ` +
        `fit before the fullest shard reaches 65,536 bytes; ${mostOneKeyApps(256, warningBytes).toLocaleString('en')} ` +
        `before it reaches ${SECRET_WARNING_FILL_PERCENT}% (SecretNearlyFull); one secret holds 963`,
    );

    // apply of 10,000 new apps into 64 shards.
    const registry = await createMotoRegistry({ secretsManager: admin, cloudFormation }, { shards: 64 });
    const file = join(work, 'changes.json');
    writeFileSync(
      file,
      JSON.stringify({
        changes: Array.from({ length: 10_000 }, (_, index) => ({ op: 'add', app: appId(index) })),
      }),
    );
    const since = proxy.calls.length;
    const started = process.hrtime.bigint();
    const result = await runCli(
      ['apply', file, '--keys-out', join(work, 'keys.jsonl'), '--registry', registry.manifestName, '--json'],
      env,
      { awsCallBounds: EMULATOR_CALL_BOUNDS },
    );
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (result.code !== 0) throw new Error(`apply failed: ${result.stderr}`);
    const keys = readFileSync(join(work, 'keys.jsonl'), 'utf8').trim().split('\n').length;
    const byOperation = new Map<string, number>();
    for (const call of proxy.calls.slice(since)) {
      byOperation.set(call.operation, (byOperation.get(call.operation) ?? 0) + 1);
    }
    lines.push(
      `- apply of 10,000 new apps into 64 shards (moto, through the proxy): ${proxy.count('PutSecretValue', since)} ` +
        `PutSecretValue calls (target: at most 64), ${fmt(seconds, 2)} s, ${keys.toLocaleString('en')} keys written; ` +
        `every call: ${[...byOperation].map(([operation, count]) => `${operation} ${count}`).join(', ')}`,
    );
  } finally {
    admin.destroy();
    viaProxy.destroy();
    cloudFormation.destroy();
    await proxy.close();
    rmSync(work, { recursive: true, force: true });
  }
  return lines;
}
