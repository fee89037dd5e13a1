import { appsOnEveryShard } from '../../../support/shards';

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

/** `count` app ids whose shard under `shards` is `shard`: the first of `<prefix>-0`, `<prefix>-1`, ... placed there. */
export function appsOfShard(shard: number, shards: number, count: number, prefix = 'app'): string[] {
  return (appsOnEveryShard(shards, count, prefix).get(shard) ?? []).slice(0, count);
}
