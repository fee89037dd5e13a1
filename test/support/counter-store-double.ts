/**
 * A counter store in memory (lambda/payment/rate-limit/counter-store.ts), for the limiter's rules without DynamoDB:
 * conditional increments shared by every limiter given the same double (so several "execution environments" share
 * one count), DynamoDB's per-item write rate as an option (any item past `writesPerSecondPerItem` writes in the last
 * second is throttled, and a throttled write writes nothing), and scripted answers for the failure cases. It records
 * every call, so tests can count them.
 */
import type {
  CounterIncrement,
  CounterStore,
  IncrementOutcome,
} from '../../lambda/payment/rate-limit/counter-store';

export interface StoreCall {
  readonly request: CounterIncrement;
  readonly at: number;
  readonly outcome: IncrementOutcome;
}

export interface CounterStoreDoubleOptions {
  /** The clock the throttle counts by. Default Date.now. */
  readonly now?: () => number;
  /** DynamoDB's per-item ceiling: writes (counted or refused) an item takes in any second. Default: no limit. */
  readonly writesPerSecondPerItem?: number;
}

export class CounterStoreDouble implements CounterStore {
  readonly calls: StoreCall[] = [];
  /** What each item holds. */
  readonly counts = new Map<string, number>();
  /** When each item took its writes (counted and refused: both cost DynamoDB a write), oldest first. */
  readonly writes = new Map<string, number[]>();
  private readonly now: () => number;
  private readonly writesPerSecondPerItem: number;
  private readonly scripted: Array<IncrementOutcome | 'hang'> = [];

  constructor(options: CounterStoreDoubleOptions = {}) {
    this.now = options.now ?? Date.now;
    this.writesPerSecondPerItem = options.writesPerSecondPerItem ?? Infinity;
  }

  /**
   * The next calls get these answers, in order (`hang`: no answer, settling only when the caller's signal aborts, as
   * the DynamoDB store does), whatever the items hold.
   */
  answer(...outcomes: Array<IncrementOutcome | 'hang'>): this {
    this.scripted.push(...outcomes);
    return this;
  }

  increment(request: CounterIncrement): Promise<IncrementOutcome> {
    const at = this.now();
    const scripted = this.scripted.shift();
    if (scripted === 'hang') {
      const outcome: IncrementOutcome = {
        kind: 'failed',
        landed: 'maybe',
        error: 'TimeoutError: time budget ran out after sending',
      };
      this.calls.push({ request, at, outcome });
      return new Promise((resolve) => {
        if (request.signal.aborted) resolve(outcome);
        request.signal.addEventListener(
          'abort',
          () => {
            resolve(outcome);
          },
          { once: true },
        );
      });
    }
    const outcome = scripted ?? this.write(request, at);
    this.calls.push({ request, at, outcome });
    return Promise.resolve(outcome);
  }

  /** The most writes any item took within one second (a sliding second), and the item. */
  peakWritesPerSecond(): { readonly item: string; readonly writes: number } {
    let peak = { item: '', writes: 0 };
    for (const [item, times] of this.writes) {
      let start = 0;
      for (let end = 0; end < times.length; end++) {
        while ((times[end] ?? 0) - (times[start] ?? 0) >= 1000) start++;
        if (end - start + 1 > peak.writes) peak = { item, writes: end - start + 1 };
      }
    }
    return peak;
  }

  private write(request: CounterIncrement, at: number): IncrementOutcome {
    const times = this.writes.get(request.key) ?? [];
    this.writes.set(request.key, times);
    let recent = 0;
    for (let index = times.length - 1; index >= 0 && (times[index] ?? 0) > at - 1000; index--) recent++;
    if (recent >= this.writesPerSecondPerItem) {
      return {
        kind: 'throttled',
        error: 'ProvisionedThroughputExceededException: the item is past its write rate',
      };
    }
    times.push(at);
    const used = this.counts.get(request.key) ?? 0;
    if (used >= request.capacity) return { kind: 'full' };
    this.counts.set(request.key, used + 1);
    return { kind: 'counted', used: used + 1 };
  }
}
