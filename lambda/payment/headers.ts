import type { APIGatewayProxyEvent } from 'aws-lambda';

/** API Gateway sends `null` for either map when the request has no headers, whatever the type says. */
export interface HeaderSource {
  readonly headers: APIGatewayProxyEvent['headers'] | null;
  readonly multiValueHeaders: APIGatewayProxyEvent['multiValueHeaders'] | null;
}

/**
 * Case-insensitive view of a REST proxy event's headers. API Gateway puts every value of a repeated header in
 * `multiValueHeaders` and only one of them in `headers`, each under the caller's own casing, so both are read:
 * the multi-value map first (it sees duplicates), then any name only `headers` has.
 */
export class RequestHeaders {
  private constructor(private readonly byName: ReadonlyMap<string, readonly string[]>) {}

  static fromEvent(event: HeaderSource): RequestHeaders {
    const byName = new Map<string, string[]>();
    const fromMultiValue = new Set<string>();

    for (const [name, values] of Object.entries(event.multiValueHeaders ?? {})) {
      if (values === undefined) continue;
      const key = name.toLowerCase();
      fromMultiValue.add(key);
      byName.set(key, [...(byName.get(key) ?? []), ...values]);
    }
    for (const [name, value] of Object.entries(event.headers ?? {})) {
      const key = name.toLowerCase();
      if (value === undefined || fromMultiValue.has(key)) continue;
      byName.set(key, [...(byName.get(key) ?? []), value]);
    }
    return new RequestHeaders(byName);
  }

  /** Every value received for the header, in order; empty when it was not sent. */
  all(name: string): readonly string[] {
    return this.byName.get(name.toLowerCase()) ?? [];
  }
}
