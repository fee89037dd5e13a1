/**
 * App ids placed where a test needs them in a registry of several shards, by the one placement rule (shardOf), and
 * the shard texts of a registry holding given apps. Pure: registries in moto are test/support/registry-moto.ts's.
 */
import { serializeKeyDocument, type DocumentApp } from '../../shared/keys/key-document';
import { shardOf } from '../../shared/keys/shard';

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

/** App ids `<prefix>-0`, `<prefix>-1`, ... by their home under `shards`, taken in order until every shard has `atLeast`. */
export function appsOnEveryShard(shards: number, atLeast: number, prefix = 'partner'): Map<number, string[]> {
  const apps = new Map<number, string[]>();
  for (let n = 0; apps.size < shards || [...apps.values()].some((ids) => ids.length < atLeast); n++) {
    const appId = `${prefix}-${n}`;
    const shard = shardOf(appId, shards);
    apps.set(shard, [...(apps.get(shard) ?? []), appId]);
  }
  return apps;
}

function firstAppId(prefix: string, fits: (appId: string) => boolean): string {
  for (let n = 0; n < 100_000; n++) {
    const appId = `${prefix}-${n}`;
    if (fits(appId)) return appId;
  }
  throw new Error(`no app id of the form ${prefix}-<n> is placed as asked`);
}

/** The shard texts of a registry holding `apps` placed by `shards` (every shard, empty ones `{}`). */
export function shardTexts(apps: ReadonlyMap<string, DocumentApp>, shards: number): string[] {
  const documents = Array.from({ length: shards }, () => new Map<string, DocumentApp>());
  for (const [appId, app] of apps) documents[shardOf(appId, shards)]?.set(appId, app);
  return documents.map(serializeKeyDocument);
}
