/**
 * The one store call of the shared limiter, behind a seam of its own: "count one request in this item if it holds
 * fewer than `capacity`". The limiter's rules (shared-limiter.ts) know nothing of DynamoDB or of the SDK; the
 * store says what happened, in the five ways the rules tell apart. dynamodb-counter-store.ts implements it with the
 * AWS SDK; a test double implements it in memory.
 *
 * The contract every implementation keeps:
 * - the conditional write is sent at most once per `increment`: a write that may have landed is never resent (a
 *   timed-out write can still land, and a resent one would count the request twice);
 * - `increment` settles as soon as its `signal` aborts, whatever the store does (a write still in flight then is
 *   abandoned, and reported as `failed` with `landed: 'maybe'`, or `unsent` if it never left);
 * - it never throws.
 */
export interface CounterIncrement {
  /** The item: `<appId>#<window index>`, or `<appId>#<stripe>#<window index>` (counter-table.ts). */
  readonly key: string;
  /** Counted only if the item holds fewer than this. */
  readonly capacity: number;
  /** When the store may drop the item, epoch seconds. */
  readonly expiresAtSeconds: number;
  /** The caller's budget: the call ends when it aborts (the limiter's AbortSignal.timeout, made once per check). */
  readonly signal: AbortSignal;
}

export type IncrementOutcome =
  /** Counted: the item now holds `used`. */
  | { readonly kind: 'counted'; readonly used: number }
  /** Not counted: the item already holds its capacity. */
  | { readonly kind: 'full' }
  /** Not counted: the store refused the write for its rate (DynamoDB's throttling); nothing was written. */
  | { readonly kind: 'throttled'; readonly error: string }
  /**
   * Sent, and failed: `landed: 'maybe'` when the write may have taken effect (no answer in time, a connection reset
   * mid-answer, a 5xx), so the request may be counted; `'no'` when the store answered with a refusal that wrote
   * nothing (AccessDenied, ResourceNotFound, a malformed answer...).
   */
  | { readonly kind: 'failed'; readonly landed: 'no' | 'maybe'; readonly error: string }
  /** Never sent: the connection could not be made (refused, not established in time, no such host). */
  | { readonly kind: 'unsent'; readonly error: string };

export interface CounterStore {
  increment(request: CounterIncrement): Promise<IncrementOutcome>;
}
