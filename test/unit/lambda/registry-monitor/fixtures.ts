import { shardOf } from '../../../../shared/keys/shard';

/** Fixture keys: valid, obviously fake, and never to appear in anything the monitor writes. */
export const KEYS = {
  plain: 'test-monitor-plain-key-0123456789abcdef',
  expiring: 'test-monitor-expiring-key-0123456789abcdef',
  lasting: 'test-monitor-lasting-key-0123456789abcdef',
  other: 'test-monitor-other-key-0123456789abcdef',
} as const;

export const NOW = Date.parse('2026-06-01T00:00:00Z');
export const DAY_MS = 86_400_000;
export const WARNING_MS = 14 * DAY_MS;

/** `count` app ids whose shard under `shards` is `shard`, found by trying names in order. */
export function appsOfShard(shard: number, shards: number, count: number, prefix = 'app'): string[] {
  const found: string[] = [];
  for (let index = 0; found.length < count; index++) {
    const appId = `${prefix}-${index}`;
    if (shardOf(appId, shards) === shard) found.push(appId);
  }
  return found;
}
