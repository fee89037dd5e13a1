import { createHash } from 'node:crypto';
import { registryNamePrefix, shardSecretName } from '../../../shared/keys/registry';
import { appHashKey, shardOf } from '../../../shared/keys/shard';
import { documentedPlacements, placementSection } from '../../support/placement-doc';

/** What the snippet prints for a shard: shard 0 is the stack's original secret, named by its output. */
const secretOf = (shard: number, stack = 'PaymentApi'): string =>
  shard === 0 ? 'KeysSecretArn' : shardSecretName(registryNamePrefix(stack), shard);

describe("docs/keys.md's placement recipe", () => {
  it('shows worked examples, during a reshard included', () => {
    expect(documentedPlacements().map(({ appId, shards }) => `${appId}/${shards}`)).toEqual([
      'partner-a/8',
      'partner-a/4',
    ]);
  });

  it.each(documentedPlacements())(
    'gives app $appId of $shards shards the shard shardOf gives it, and that shard its secret',
    ({ appId, shards, stack, shard, secret }) => {
      expect(shard).toBe(shardOf(appId, shards));
      expect(secret).toBe(secretOf(shard, stack));
    },
  );

  it("states the worked example's SHA-256 prefix and 64-bit key as shardOf reads them", () => {
    const section = placementSection();
    const prefix = /SHA-256 begins `([0-9a-f]{16})`/.exec(section)?.[1];
    const key = /so the key is\s+(\d+)/.exec(section)?.[1];

    expect(prefix).toBe(createHash('sha256').update('partner-a', 'utf8').digest('hex').slice(0, 16));
    expect(BigInt(key ?? '0')).toBe(appHashKey('partner-a'));
  });
});
