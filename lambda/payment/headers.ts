/** A plain object's own entries; anything else (absent, null, an array, a string, a number) has none. */
function entriesOf(map: unknown): [string, unknown][] {
  if (typeof map !== 'object' || map === null || Array.isArray(map)) return [];
  return Object.entries(map as Record<string, unknown>);
}

/**
 * One header value as the handler sees it. A value that is not a string (a number, a boolean, null inside a
 * list, an object) counts as an empty value: still a value, so a header carrying it next to another was sent
 * twice, but never a key, an app id or a media type. Converting a number to its text could turn a malformed
 * event into credentials nobody sent; ignoring it could hide a second value. API Gateway only sends strings.
 */
function headerValue(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** What one `multiValueHeaders` entry says: a list's values; null, absent or [] says nothing; else one value. */
function multiValues(values: unknown): string[] {
  if (values === undefined || values === null) return [];
  return Array.isArray(values) ? values.map(headerValue) : [headerValue(values)];
}

/** What one `headers` entry says: its value; null or absent says nothing. */
function singleValues(value: unknown): string[] {
  return value === undefined || value === null ? [] : [headerValue(value)];
}

/** Appends in place: a name sent under many casings must not cost a copy per casing. */
function appendTo(byName: Map<string, string[]>, key: string, values: readonly string[]): void {
  const list = byName.get(key);
  if (list === undefined) byName.set(key, [...values]);
  // Not push(...values): spreading a list of a million values as arguments overflows the stack.
  else for (const value of values) list.push(value);
}

/**
 * Case-insensitive view of a REST proxy event's headers. API Gateway puts every value of a repeated header in
 * `multiValueHeaders` and only one of them in `headers`, each under the caller's own casing, so both are read:
 * for each name, the multi-value map when any of its entries for that name holds a value (it sees duplicates),
 * otherwise the single-value map. Either map may be missing or malformed (events from test consoles and other
 * tools): see `headerValue` for values that are not strings.
 */
export class RequestHeaders {
  private constructor(private readonly byName: ReadonlyMap<string, readonly string[]>) {}

  /** Never throws, whatever the two fields hold. */
  static fromMaps(headers: unknown, multiValueHeaders: unknown): RequestHeaders {
    const fromMultiValue = new Map<string, string[]>();
    for (const [name, values] of entriesOf(multiValueHeaders)) {
      const found = multiValues(values);
      if (found.length > 0) appendTo(fromMultiValue, name.toLowerCase(), found);
    }
    const byName = new Map(fromMultiValue);
    for (const [name, value] of entriesOf(headers)) {
      const key = name.toLowerCase();
      if (!fromMultiValue.has(key)) appendTo(byName, key, singleValues(value));
    }
    return new RequestHeaders(byName);
  }

  /** Every value received for the header, in order; empty when it was not sent. */
  all(name: string): readonly string[] {
    return this.byName.get(name.toLowerCase()) ?? [];
  }
}
