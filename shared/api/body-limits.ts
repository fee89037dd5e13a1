/**
 * What the function accepts as a body, part of the contract (openapi.yaml, docs/contract.md). API Gateway's own
 * limit (10 MiB) is far above what a payment request needs; a body is judged against these before it is parsed, so
 * no caller, key in hand or not, can make the function spend memory or time in proportion to what it sent.
 */
export const BODY_LIMITS = {
  /** The most bytes a body may have as sent (after base64 decoding, when API Gateway encoded it): 64 KiB. */
  maxBytes: 64 * 1024,
  /**
   * How deeply arrays and objects may nest: System.Text.Json's default. A payment request nests a few levels; the
   * bound keeps anything that walks the value later from recursing without end.
   */
  maxDepth: 64,
} as const;
