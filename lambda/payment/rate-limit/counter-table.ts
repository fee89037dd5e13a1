/**
 * The shape of the rate limit table, shared by the stack that creates it (lib/rate-limit-table.ts) and the limiter
 * that writes it: one item per app and window (and per stripe of a busy app), holding the window's count and the
 * instant DynamoDB's TTL may remove it.
 */
export const COUNTER_TABLE = {
  /** String: `<appId>#<window index>`, or `<appId>#<n>#<window index>` for stripe n of an app spread over several items. */
  partitionKey: 'pk',
  /** Number: the requests the window has admitted. */
  counter: 'used',
  /** Number: epoch seconds; the table's TTL attribute. */
  expiresAt: 'expiresAt',
} as const;

/** Counter items outlive their window by this much, then DynamoDB's TTL removes them. */
export const ITEM_LINGER_SECONDS = 600;

/** The partition key of an app's counter (stripe `stripe` of it, when spread over several) in window `index`. */
export function counterItemKey(appId: string, stripe: number | undefined, index: number): string {
  return stripe === undefined ? `${appId}#${index}` : `${appId}#${stripe}#${index}`;
}
