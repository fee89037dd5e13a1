/**
 * Stands in for `@aws-sdk/endpoint-cache` in the Lambda bundles (an esbuild alias: lib/bundled-function.ts). The
 * DynamoDB client builds one for endpoint discovery, which this project never turns on (it is off by default for
 * DynamoDB); the package's LRU comes from `mnemonist` and `obliterator`, 7 KB of a bundle held to 240 KB. This is the
 * same class over a Map, whose insertion order gives the least recently used entry to evict: it behaves the same if
 * discovery is ever turned on.
 */

interface Endpoint {
  readonly Address?: string;
  readonly CachePeriodInMinutes?: number;
}

interface EndpointWithExpiry {
  readonly Address: string;
  readonly Expires: number;
}

export class EndpointCache {
  private readonly cache = new Map<string, EndpointWithExpiry[]>();

  constructor(private readonly capacity: number) {}

  getEndpoint(key: string): string | undefined {
    const endpoints = this.get(key);
    if (endpoints === undefined || endpoints.length === 0) return undefined;
    return endpoints[Math.floor(Math.random() * endpoints.length)]?.Address;
  }

  get(key: string): EndpointWithExpiry[] | undefined {
    const value = this.cache.get(key);
    if (value === undefined || value.length === 0) return undefined;
    // Most recently used goes last.
    this.cache.delete(key);
    this.cache.set(key, value);
    const now = Date.now();
    const live = value.filter((endpoint) => now < endpoint.Expires);
    if (live.length === 0) {
      this.delete(key);
      return undefined;
    }
    return live;
  }

  set(key: string, endpoints: readonly Endpoint[]): void {
    const now = Date.now();
    this.cache.delete(key);
    this.cache.set(
      key,
      endpoints.map(({ Address = '', CachePeriodInMinutes = 1 }) => ({
        Address,
        Expires: now + CachePeriodInMinutes * 60 * 1000,
      })),
    );
    while (this.cache.size > this.capacity) {
      const oldest = this.cache.keys().next();
      if (oldest.done === true) break;
      this.cache.delete(oldest.value);
    }
  }

  delete(key: string): void {
    this.cache.set(key, []);
  }

  has(key: string): boolean {
    const endpoints = this.cache.get(key);
    return endpoints !== undefined && endpoints.length > 0;
  }

  clear(): void {
    this.cache.clear();
  }
}
