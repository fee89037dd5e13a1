import fc from 'fast-check';
import { appHashKey, jumpConsistentHash, shardOf } from '../../../../shared/keys/shard';

/** Computed with the paper's C++ (Lamping and Veach 2014, figure 1), compiled with g++ 12. */
const PAPER_VECTORS: ReadonlyArray<readonly [bigint, number, number]> = [
  [0n, 100_001, 0],
  [1n, 8, 6],
  [1n, 256, 192],
  [1n, 100_001, 94_075],
  [2n, 4, 3],
  [2n, 1024, 338],
  [2n, 100_001, 80_343],
  [256n, 3, 2],
  [256n, 1024, 520],
  [256n, 100_001, 86_422],
  [10863919174838991n, 11, 6],
  [10863919174838991n, 256, 117],
  [2016238256797177309n, 11, 3],
  [2016238256797177309n, 1024, 863],
  [1673758223894951030n, 11, 5],
  [1673758223894951030n, 64, 61],
  [18446744073709551615n, 8, 7],
  [18446744073709551615n, 256, 248],
  [9223372036854775808n, 16, 12],
  [9223372036854775808n, 100_001, 74_317],
  [0x0123456789abcdefn, 64, 57],
  [0x0123456789abcdefn, 256, 194],
];

describe('jumpConsistentHash', () => {
  it.each(PAPER_VECTORS)(
    'places key %p among %p buckets where the paper does (%p)',
    (key, buckets, bucket) => {
      expect(jumpConsistentHash(key, buckets)).toBe(bucket);
    },
  );

  it.each([0, -1, 1.5, Number.NaN])('refuses %p buckets', (buckets) => {
    expect(() => jumpConsistentHash(1n, buckets)).toThrow('buckets must be a whole number, at least 1');
  });

  it('moves a key only to the new bucket when one is added', () => {
    fc.assert(
      fc.property(
        fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
        fc.integer({ min: 1, max: 300 }),
        (key, n) => {
          const before = jumpConsistentHash(key, n);
          const after = jumpConsistentHash(key, n + 1);
          expect(after === before || after === n).toBe(true);
        },
      ),
    );
  });
});

describe('shardOf', () => {
  it('hashes the app id with SHA-256, first 8 bytes big-endian', () => {
    // sha256("demo") = 2a97516c354b68848cdbd8f54a226a0a55b21ed138e207ad6c5cbb9c00aa5aea
    expect(appHashKey('demo')).toBe(0x2a97516c354b6884n);
    expect(shardOf('demo', 64)).toBe(jumpConsistentHash(0x2a97516c354b6884n, 64));
  });

  it('puts every app on shard 0 of a single secret', () => {
    fc.assert(fc.property(fc.string(), (appId) => shardOf(appId, 1) === 0));
  });

  it('stays within the shards and is stable', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 64 }),
        fc.integer({ min: 1, max: 256 }),
        (appId, n) => {
          const shard = shardOf(appId, n);
          expect(shard).toBeGreaterThanOrEqual(0);
          expect(shard).toBeLessThan(n);
          expect(shardOf(appId, n)).toBe(shard);
        },
      ),
    );
  });

  it('moves about 1/(n+1) of 10,000 apps from 63 to 64 shards, and spreads them evenly', () => {
    const apps = Array.from({ length: 10_000 }, (_, index) => `merchant-${index}`);
    const moved = apps.filter((appId) => shardOf(appId, 63) !== shardOf(appId, 64));
    expect(moved.every((appId) => shardOf(appId, 64) === 63)).toBe(true);
    expect(moved.length).toBeGreaterThan(10_000 / 64 - 60);
    expect(moved.length).toBeLessThan(10_000 / 64 + 60);

    const perShard = new Array<number>(64).fill(0);
    for (const appId of apps) perShard[shardOf(appId, 64)] = (perShard[shardOf(appId, 64)] ?? 0) + 1;
    expect(Math.max(...perShard)).toBeLessThan(10_000 / 64 + 60);
    expect(Math.min(...perShard)).toBeGreaterThan(10_000 / 64 - 60);
  });
});
