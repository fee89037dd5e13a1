/** An HTTP answer as the smoke test received it. Header names are lower-cased; a header received twice has two values. */
export interface SmokeAnswer {
  readonly status: number;
  readonly headers: ReadonlyMap<string, readonly string[]>;
  readonly body: string;
}

/** What became of one check's request. */
export type Outcome =
  | { readonly kind: 'answer'; readonly answer: SmokeAnswer }
  /**
   * Sent, but no HTTP answer came back (refused, reset, timed out, TLS failure). `unreachable`: the API cannot
   * be reached at all (nothing listens, no such host, a certificate refused, no answer in time), so sending
   * the remaining requests would only repeat the failure, slowly.
   */
  | { readonly kind: 'no-answer'; readonly reason: string; readonly unreachable: boolean }
  /** Not sent: an earlier request showed the API cannot be reached. */
  | { readonly kind: 'not-run'; readonly reason: string };

/** Groups node's `rawHeaders` (name, value, name, value…) by lower-cased name, repeats kept in order. */
export function headerMap(rawHeaders: readonly string[]): ReadonlyMap<string, readonly string[]> {
  const map = new Map<string, string[]>();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] ?? '').toLowerCase();
    const value = rawHeaders[index + 1] ?? '';
    const values = map.get(name);
    if (values) values.push(value);
    else map.set(name, [value]);
  }
  return map;
}
