import { describeError, type Logger } from '../../shared/logger';
import type { RegistryLayout } from '../../shared/keys/registry';
import {
  KeysUnavailableError,
  type CurrentKeys,
  type KeyringProvider,
  type SecretSource,
} from '../../lambda/payment/key-cache';
import { ShardedKeys } from '../../lambda/payment/sharded-keys';

/**
 * The keys of a key registry whose layout can change while the local server runs: a local registry.json that
 * `reshard --shards` rewrites, or a manifest secret that a deploy rewrites. The Lambda gets its layout from its
 * environment, which a deploy replaces; the local server reads the manifest instead, and serves through the
 * Lambda's own ShardedKeys (a key cache per shard, the fallback rule during a reshard), built anew for each layout.
 *
 * The manifest is read again every TTL, as a shard is (in the background: requests go on with the layout they have),
 * and at once when the caller says it changed (the registry file watched): requests then wait for the new layout.
 * A reshard waits at least a TTL between a deploy (or `reshard --shards`) and removing old copies, so the rule the
 * key cache follows for a moved app holds here too: a request whose app is found in no shard is refused only on a
 * layout read less than a TTL ago; on an older one it waits for a fresh read (503 if that read fails), since the
 * app may have moved to where only the new layout looks.
 */

export interface RegistryKeysOptions {
  /** The layout the server started with, and when its read started (epoch ms). */
  readonly layout: RegistryLayout;
  readonly layoutReadAt: number;
  /** Reads the manifest again: the layout, shard ids as `sourceFor` takes them. Rejects with a one-line error. */
  readonly readLayout: () => Promise<RegistryLayout>;
  /** Names the manifest in logs (a path or a secret id). */
  readonly description: string;
  readonly sourceFor: (index: number, id: string) => SecretSource;
  readonly logger: Logger;
  readonly ttlMs: number;
  readonly maxStaleMs: number;
  /** Told of each new layout once it is served (the file watch follows the registry's files). */
  readonly onLayoutChange?: (layout: RegistryLayout) => void;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

interface Current {
  readonly layout: RegistryLayout;
  readonly keys: ShardedKeys;
  /** When the newest read that found this layout started. */
  readonly readAt: number;
}

export function sameLayout(a: RegistryLayout, b: RegistryLayout): boolean {
  return (
    a.shards === b.shards &&
    a.previousShards === b.previousShards &&
    a.shardIds.length === b.shardIds.length &&
    a.shardIds.every((id, index) => id === b.shardIds[index])
  );
}

export class RegistryKeys implements KeyringProvider {
  private readonly options: RegistryKeysOptions;
  private readonly now: () => number;
  private current: Current;
  /** A read requests wait for: the caller said the manifest changed. */
  private awaited: Promise<void> | undefined;
  /** The read in flight, whoever started it. */
  private inFlight: Promise<void> | undefined;
  /** Reads are numbered as they start, so that an older read finishing last never replaces a newer layout. */
  private started = 0;
  private applied = 0;

  constructor(options: RegistryKeysOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
    this.current = {
      layout: options.layout,
      keys: this.keysFor(options.layout),
      readAt: options.layoutReadAt,
    };
  }

  /** The layout served now. */
  get layout(): RegistryLayout {
    return this.current.layout;
  }

  async getKeys(appId: string): Promise<CurrentKeys> {
    for (let awaited = this.awaited; awaited !== undefined; awaited = this.awaited) {
      await awaited;
      if (this.awaited === awaited) this.awaited = undefined;
    }
    if (!this.fresh()) this.inFlight ??= this.read();
    for (let round = 0; ;) {
      const { keys } = this.current;
      const found = await keys.getKeys(appId);
      if (found.keyring.has(appId)) return found;
      // The layout changed while it looked: look where the new one says.
      if (keys !== this.current.keys) continue;
      if (this.fresh()) return found;
      // Not found, on a layout older than a TTL: a fresh one decides (the read in flight, and one more if that one
      // started too long ago).
      if (round++ === 2) {
        throw new KeysUnavailableError(
          'the key registry manifest is older than the cache TTL and cannot be read again',
        );
      }
      await (this.inFlight ??= this.read());
    }
  }

  /** The manifest changed: the next requests wait for it to be read again. */
  reloadLayout(): void {
    const read = this.read();
    this.inFlight = read;
    this.awaited = read;
  }

  /** A shard's source (its file) changed: the shards it holds are read again, requests for them waiting. */
  reloadShard(id: string): void {
    const { layout, keys } = this.current;
    layout.shardIds.forEach((shardId, index) => {
      if (shardId === id) keys.reload(index);
    });
  }

  private fresh(): boolean {
    return this.now() - this.current.readAt < this.options.ttlMs;
  }

  private keysFor(layout: RegistryLayout): ShardedKeys {
    const { sourceFor, logger, ttlMs, maxStaleMs } = this.options;
    return new ShardedKeys({ layout, sourceFor, logger, ttlMs, maxStaleMs });
  }

  /** Reads the manifest; never rejects (a failure is logged, and the layout held is kept). */
  private async read(): Promise<void> {
    const number = ++this.started;
    const startedAt = this.now();
    try {
      const layout = await this.options.readLayout();
      if (number < this.applied) return;
      this.applied = number;
      if (sameLayout(layout, this.current.layout)) {
        this.current = { ...this.current, readAt: Math.max(this.current.readAt, startedAt) };
        return;
      }
      this.current = { layout, keys: this.keysFor(layout), readAt: startedAt };
      this.options.logger.info('key registry changed', { source: this.options.description });
      this.options.onLayoutChange?.(layout);
    } catch (error) {
      this.options.logger.error('key registry read failed', {
        source: this.options.description,
        error: describeError(error),
      });
    } finally {
      if (this.started === number) this.inFlight = undefined;
    }
  }
}
