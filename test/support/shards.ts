/**
 * Registries of several shards for tests: app ids placed where a test needs them (by the one placement rule,
 * shardOf), and shard secrets created in moto under the names the stack gives them.
 */
import { serializeKeyDocument, type DocumentApp } from '../../shared/keys/key-document';
import {
  REGISTRY_ENV,
  registryNamePrefix,
  secretRegistryLayout,
  shardSecretName,
  shardSlots,
  type RegistryLayout,
} from '../../shared/keys/registry';
import { shardOf } from '../../shared/keys/shard';
import { createMotoSecret, type MotoServer } from './moto';

/** The first app id `<prefix>-<n>` whose home under `shards` is `shard`. */
export function appOnShard(shard: number, shards: number, prefix = 'app'): string {
  return firstAppId(prefix, (appId) => shardOf(appId, shards) === shard);
}

/** An app that a reshard from `previousShards` to `shards` moves, with its home now and before. */
export function movingApp(
  shards: number,
  previousShards: number,
  prefix = 'moving',
): { readonly appId: string; readonly home: number; readonly previousHome: number } {
  const appId = firstAppId(
    prefix,
    (candidate) => shardOf(candidate, shards) !== shardOf(candidate, previousShards),
  );
  return { appId, home: shardOf(appId, shards), previousHome: shardOf(appId, previousShards) };
}

/** An app whose home is `home` under `shards` and `previousHome` under `previousShards`. */
export function appMovingBetween(
  { shards, home }: { readonly shards: number; readonly home: number },
  { previousShards, previousHome }: { readonly previousShards: number; readonly previousHome: number },
  prefix: string,
): string {
  return firstAppId(
    prefix,
    (appId) => shardOf(appId, shards) === home && shardOf(appId, previousShards) === previousHome,
  );
}

function firstAppId(prefix: string, fits: (appId: string) => boolean): string {
  for (let n = 0; n < 100_000; n++) {
    const appId = `${prefix}-${n}`;
    if (fits(appId)) return appId;
  }
  throw new Error(`no app id of the form ${prefix}-<n> is placed as asked`);
}

/** The shard texts of a registry holding `apps` placed by `shards` (every slot of `slots`, empty ones `{}`). */
export function shardTexts(
  apps: ReadonlyMap<string, DocumentApp>,
  shards: number,
  slots: number = shards,
): string[] {
  const documents = Array.from({ length: slots }, () => new Map<string, DocumentApp>());
  for (const [appId, app] of apps) documents[shardOf(appId, shards)]?.set(appId, app);
  return documents.map(serializeKeyDocument);
}

export interface MotoRegistry {
  readonly layout: RegistryLayout;
  /** KEYS_SECRET_ID and, with several shards, KEY_SHARDS, KEY_SHARDS_PREVIOUS and KEY_SHARD_NAME_PREFIX. */
  readonly env: Readonly<Record<string, string>>;
}

/**
 * Creates a registry's shard secrets in moto as the stack names them (design: shard 0 is the stack's keys secret,
 * whatever its name; shard i is `payment-api/<stack>/keys/shard-<i>`), each holding `texts[i]`, and returns the
 * payment Lambda's environment for it.
 */
export async function createMotoRegistry(
  moto: MotoServer,
  options: {
    readonly stackName: string;
    readonly shards: number;
    readonly previousShards?: number;
    readonly texts: readonly string[];
  },
): Promise<MotoRegistry> {
  const { stackName, shards, previousShards, texts } = options;
  const namePrefix = registryNamePrefix(stackName);
  const slots = shardSlots({ shards, ...(previousShards === undefined ? {} : { previousShards }) });
  if (texts.length !== slots) throw new Error(`a registry of ${slots} shard slots needs ${slots} texts`);
  const shardZeroId = await createMotoSecret(moto, `${stackName}-keys`, texts[0] ?? '{}');
  for (let index = 1; index < slots; index++) {
    await createMotoSecret(moto, shardSecretName(namePrefix, index), texts[index] ?? '{}');
  }
  const layout = secretRegistryLayout({
    shardZeroId,
    namePrefix,
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
  });
  const env: Record<string, string> = { [REGISTRY_ENV.shardZero]: shardZeroId };
  if (slots > 1) {
    env[REGISTRY_ENV.shards] = String(shards);
    env[REGISTRY_ENV.namePrefix] = namePrefix;
    if (previousShards !== undefined) env[REGISTRY_ENV.previousShards] = String(previousShards);
  }
  return { layout, env };
}
