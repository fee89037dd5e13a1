/**
 * `keys leaked` (issue 25): 100 leaked keys against 64 shards holding 10,000 apps in moto, through the proxy that
 * refuses what Secrets Manager refuses and counts the calls: BatchGetSecretValue calls to find them, writes per shard
 * touched, and the time of the whole command (three runs, each on a fresh registry). And capacity with digests the
 * default: 10,000 apps of the heaviest shape in 64 shards, the fullest shard's fill.
 */
import { Readable } from 'node:stream';
import { ListSecretsCommand } from '@aws-sdk/client-secrets-manager';
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { generatePrefixedKey } from '../../shared/keys/key-format';
import { serializeKeyDocument, type DocumentApp, type KeyDocument } from '../../shared/keys/key-document';
import { toCompactDigestForm } from '../../shared/keys/key-material';
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
import { fmt, spread } from './stats';

const APPS = 10_000;
const SHARDS = 64;
const LEAKED = 100;
const RUNS = 3;

const appId = (index: number): string => `app-${String(index).padStart(8, '0')}`;

const EXPIRES = '2026-12-24T00:00:00Z';
const TWO_CIDRS = ['203.0.113.0/24', '2001:db8::/32'];

/** The heaviest shape as the CLI writes it now: two d: digests mid-rotation, the old one expiring, two blocks. */
function heaviestDigestApp(currentKey: string): DocumentApp {
  return {
    keys: [
      { stored: toCompactDigestForm(generatePrefixedKey()), expires: EXPIRES },
      { stored: toCompactDigestForm(currentKey) },
    ],
    allowedCidrs: TWO_CIDRS,
  };
}

/** `apps` apps placed by shardOf; each shard's document, and the current key of every app. */
function placed(shape: (key: string) => DocumentApp): {
  readonly documents: Map<number, KeyDocument>;
  readonly keys: string[];
} {
  const documents = new Map<number, Map<string, DocumentApp>>();
  const keys: string[] = [];
  for (let index = 0; index < APPS; index++) {
    const key = generatePrefixedKey();
    keys.push(key);
    const shard = shardOf(appId(index), SHARDS);
    const document = documents.get(shard) ?? new Map<string, DocumentApp>();
    document.set(appId(index), shape(key));
    documents.set(shard, document);
  }
  return { documents, keys };
}

const bytesOf = (document: KeyDocument): number => Buffer.byteLength(serializeKeyDocument(document));
const percent = (bytes: number): string => `${fmt((bytes / SECRET_MAX_BYTES) * 100)}%`;
const entryBytes = (app: DocumentApp): number => bytesOf(new Map([[appId(0), app]])) - 2;

function capacityLines(): string[] {
  const digest = placed(heaviestDigestApp);
  const fills = [...digest.documents.values()].map(bytesOf);
  const legacy = entryBytes(heaviestApp());
  const now = entryBytes(heaviestDigestApp(generatePrefixedKey()));
  // After `leaked --rotate`: the leaked current key expiring, and a third (new) d: key.
  const rotated = heaviestDigestApp(generatePrefixedKey());
  const afterRotate = entryBytes({
    ...rotated,
    keys: [
      ...rotated.keys.map((key) => ({ ...key, expires: EXPIRES })),
      { stored: toCompactDigestForm(generatePrefixedKey()) },
    ],
  });
  return [
    `- capacity with digests the default: ${APPS.toLocaleString('en')} apps of the heaviest shape written now ` +
      `(two d: digests mid-rotation, one expiring, two blocks; ${now} bytes each, against ${legacy} with sha256: ` +
      `digests) in ${SHARDS} shards: fullest shard ${percent(Math.max(...fills))} ` +
      `(${Math.max(...fills).toLocaleString('en')} bytes), mean ` +
      `${percent(fills.reduce((a, b) => a + b, 0) / fills.length)}; target: each at most ${SECRET_WARNING_FILL_PERCENT}%. ` +
      `The shape shrinks by ${legacy - now} bytes; an app mid-way through leaked --rotate (three keys, two expiring) ` +
      `takes ${afterRotate} bytes, ${afterRotate - legacy >= 0 ? '+' : ''}${afterRotate - legacy} against the old heaviest.`,
  ];
}

export async function leakedLines(moto: MotoServer): Promise<string[]> {
  const lines = ['keys leaked:', ...capacityLines()];
  const proxy = await startSecretsManagerRules(moto.port);
  const env = { ...moto.awsEnv, AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint };
  const admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  const cloudFormation = createOperatorCloudFormationClient(admin, moto.awsEnv, EMULATOR_CALL_BOUNDS);
  const seconds: number[] = [];
  const figures: string[] = [];
  try {
    await admin.send(new ListSecretsCommand({}));
    await cloudFormation.send(new DescribeStacksCommand({}));
    for (let run = 0; run < RUNS; run++) {
      const { documents, keys } = placed((key) => ({
        keys: [{ stored: toCompactDigestForm(key) }],
      }));
      const registry = await createMotoRegistry(
        { secretsManager: admin, cloudFormation },
        {
          shards: SHARDS,
          texts: Array.from({ length: SHARDS }, (_, index) =>
            serializeKeyDocument(documents.get(index) ?? new Map()),
          ),
        },
      );
      // Every 100th app: spread over the shards as a leak would be.
      const leaked = Array.from({ length: LEAKED }, (_, index) => keys[index * (APPS / LEAKED)] ?? '');
      const touched = new Set(
        Array.from({ length: LEAKED }, (_, index) => shardOf(appId(index * (APPS / LEAKED)), SHARDS)),
      );
      const since = proxy.calls.length;
      const started = process.hrtime.bigint();
      const result = await runCli(['leaked', '--stack', registry.stackName], env, {
        awsCallBounds: EMULATOR_CALL_BOUNDS,
        stdin: () => Readable.from([leaked.join('\n') + '\n']),
      });
      seconds.push(Number(process.hrtime.bigint() - started) / 1e9);
      if (result.code !== 0) throw new Error(`leaked failed (${result.code}): ${result.stderr}`);
      const puts = proxy.calls.slice(since).filter((call) => call.operation === 'PutSecretValue');
      const putShards = new Set(puts.map((call) => call.secretId));
      figures.push(
        `run ${run + 1}: ${proxy.count('BatchGetSecretValue', since)} ` +
          `BatchGetSecretValue, ${proxy.count('GetSecretValue', since)} GetSecretValue (the manifest), ` +
          `${puts.length} PutSecretValue over ${putShards.size} shards (${touched.size} touched)`,
      );
    }
  } finally {
    admin.destroy();
    cloudFormation.destroy();
    await proxy.close();
  }
  lines.push(
    `- leaked with ${LEAKED} keys against ${SHARDS} shards holding ${APPS.toLocaleString('en')} apps (moto, through the ` +
      `proxy): ${spread(seconds, 2, ' s')} over ${RUNS} runs, each on a fresh registry; ${figures.join('; ')}. ` +
      'Targets: at most 4 BatchGetSecretValue calls, at most one write per shard touched.',
  );
  return lines;
}
