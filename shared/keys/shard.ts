import { createHash } from 'node:crypto';

/**
 * Where an app lives in a registry of several secrets: one pure function of its app id and the shard count, the
 * only placement rule in the project. The Lambda, the key CLI, the rotation and monitor functions, the local
 * server and the smoke tool all import it; two copies of a placement rule drift, and then an app is written where
 * no reader looks.
 *
 * Jump consistent hash (Lamping and Veach, "A Fast, Minimal Memory, Consistent Hash Algorithm", 2014): growing
 * from n to n + 1 shards moves only the apps that land on the new shard (1/(n + 1) of them), each from wherever it
 * was; shrinking moves only the apps of the shards removed. It needs no table, so a reader knows an app's shard
 * from two numbers. `hash % n` would move almost every app at each change.
 *
 * By hand (docs/keys.md): take the first 8 bytes of SHA-256 of the app id's UTF-8 bytes as an unsigned 64-bit
 * big-endian integer, and run the paper's loop on it. No npm package of it is kept up (the two there are
 * unmaintained, one with a dependency for 64-bit arithmetic), and the loop is eight lines: it is written here and
 * checked against the paper's C++ on published vectors (test/unit/shared/keys/shard.test.ts).
 */

const MULTIPLIER = 2862933555777941757n;
const UINT64_MASK = (1n << 64n) - 1n;
const TWO_TO_THE_31 = 2 ** 31;

/** The paper's loop: the bucket in [0, buckets) of a 64-bit key. `buckets` must be a whole number, at least 1. */
export function jumpConsistentHash(key: bigint, buckets: number): number {
  if (!Number.isInteger(buckets) || buckets < 1) {
    throw new RangeError(`buckets must be a whole number, at least 1, got ${buckets}`);
  }
  let state = BigInt.asUintN(64, key);
  let bucket = -1;
  let next = 0;
  while (next < buckets) {
    bucket = next;
    state = (state * MULTIPLIER + 1n) & UINT64_MASK;
    next = Math.floor((bucket + 1) * (TWO_TO_THE_31 / (Number(state >> 33n) + 1)));
  }
  return bucket;
}

/** The 64-bit key jump hash places an app by: the first 8 bytes of SHA-256 of its id, big-endian. */
export function appHashKey(appId: string): bigint {
  return createHash('sha256').update(appId, 'utf8').digest().readBigUInt64BE(0);
}

/** The shard, 0 to `shards` - 1, that holds `appId` in a registry of `shards` secrets. */
export function shardOf(appId: string, shards: number): number {
  return shards === 1 ? 0 : jumpConsistentHash(appHashKey(appId), shards);
}
