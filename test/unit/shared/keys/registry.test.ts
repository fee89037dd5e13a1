import {
  layoutProblem,
  parseRegistryManifest,
  readRegistryLayout,
  REGISTRY_MANIFEST_FORMAT,
  secretRegistryLayout,
  serializeRegistryManifest,
  shardsToSearch,
  type RegistryManifest,
} from '../../../../shared/keys/registry';
import { shardOf } from '../../../../shared/keys/shard';

const SHARD_ZERO = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:KeysSecret-AbCdEf';

describe('readRegistryLayout', () => {
  it('is the single secret without KEY_SHARDS', () => {
    expect(readRegistryLayout({ KEYS_SECRET_ID: SHARD_ZERO })).toEqual({ shards: 1, shardIds: [SHARD_ZERO] });
  });

  it('names shard 0 by its id and the others by name under the prefix', () => {
    const layout = readRegistryLayout({
      KEYS_SECRET_ID: SHARD_ZERO,
      KEY_SHARDS: '4',
      KEY_SHARDS_PREVIOUS: '2',
      KEY_SHARD_NAME_PREFIX: 'payment-api/prod/keys/',
    });

    expect(layout).toEqual({
      shards: 4,
      previousShards: 2,
      shardIds: [
        SHARD_ZERO,
        'payment-api/prod/keys/shard-1',
        'payment-api/prod/keys/shard-2',
        'payment-api/prod/keys/shard-3',
      ],
    });
  });

  it('keeps every shard of a registry that shrinks until the reshard is done', () => {
    const layout = secretRegistryLayout({
      shardZeroId: SHARD_ZERO,
      namePrefix: 'p/',
      shards: 2,
      previousShards: 5,
    });
    expect(layout.shardIds).toHaveLength(5);
  });

  it.each([
    [{ KEY_SHARDS: '4' }, 'KEYS_SECRET_ID must name the keys secret'],
    [
      { KEYS_SECRET_ID: SHARD_ZERO, KEY_SHARDS: '0' },
      'KEY_SHARDS must be a whole number from 1 to 1024, got "0"',
    ],
    [
      { KEYS_SECRET_ID: SHARD_ZERO, KEY_SHARDS: '1025' },
      'KEY_SHARDS must be a whole number from 1 to 1024, got "1025"',
    ],
    [{ KEYS_SECRET_ID: SHARD_ZERO, KEY_SHARDS: '2.5' }, 'KEY_SHARDS must be a whole number from 1 to 1024'],
    [
      { KEYS_SECRET_ID: SHARD_ZERO, KEY_SHARDS: '4' },
      'KEY_SHARD_NAME_PREFIX must be set when KEY_SHARDS is above 1',
    ],
    [
      { KEYS_SECRET_ID: SHARD_ZERO, KEY_SHARDS: '4', KEY_SHARDS_PREVIOUS: '4', KEY_SHARD_NAME_PREFIX: 'p/' },
      'key registry: previousShards must differ from shards',
    ],
  ])('refuses %p in one line', (env, message) => {
    expect(() => readRegistryLayout(env)).toThrow(message);
  });
});

describe('shardsToSearch', () => {
  it('looks only in the home shard when no reshard is under way', () => {
    expect(shardsToSearch({ shards: 64 }, 'merchant-1')).toEqual([shardOf('merchant-1', 64)]);
  });

  it('looks in the new home first, then the old one, while a reshard is under way', () => {
    const apps = Array.from({ length: 200 }, (_, index) => `merchant-${index}`);
    const moving = apps.find((appId) => shardOf(appId, 8) !== shardOf(appId, 4)) ?? '';
    const staying = apps.find((appId) => shardOf(appId, 8) === shardOf(appId, 4)) ?? '';

    expect(shardsToSearch({ shards: 8, previousShards: 4 }, moving)).toEqual([
      shardOf(moving, 8),
      shardOf(moving, 4),
    ]);
    expect(shardsToSearch({ shards: 8, previousShards: 4 }, staying)).toEqual([shardOf(staying, 8)]);
  });
});

describe('the registry manifest', () => {
  const manifest: RegistryManifest = {
    shards: 3,
    previousShards: 2,
    shardIds: [SHARD_ZERO, 'p/shard-1', 'p/shard-2'],
    keyCacheTtlSeconds: 60,
  };

  it('reads what it writes', () => {
    expect(parseRegistryManifest(serializeRegistryManifest(manifest))).toEqual({ ok: true, manifest });
  });

  it.each([
    ['{', 'the registry manifest is not valid JSON'],
    ['[]', 'the registry manifest must be a JSON object'],
    [
      JSON.stringify({ format: 'other', shards: 1, shardIds: ['a'] }),
      `"format" must be "${REGISTRY_MANIFEST_FORMAT}"`,
    ],
    [
      JSON.stringify({ format: REGISTRY_MANIFEST_FORMAT, shards: 1, shardIds: ['a'], extra: 1 }),
      'unknown field "extra"',
    ],
    [
      JSON.stringify({ format: REGISTRY_MANIFEST_FORMAT, shards: 2, shardIds: ['a'] }),
      'shardIds must name 2 shards, got 1',
    ],
    [
      JSON.stringify({ format: REGISTRY_MANIFEST_FORMAT, shards: 2, shardIds: ['a', 'a'] }),
      'shardIds must all differ',
    ],
    [
      JSON.stringify({ format: REGISTRY_MANIFEST_FORMAT, shards: 1025, shardIds: ['a'] }),
      'shards must be a whole number from 1 to 1024',
    ],
  ])('refuses %s', (text, problem) => {
    const reading = parseRegistryManifest(text);
    expect(reading.ok).toBe(false);
    expect(reading.ok ? '' : reading.problem).toContain(problem);
  });

  it('finds nothing wrong with a valid layout', () => {
    expect(layoutProblem(manifest)).toBeUndefined();
  });
});
