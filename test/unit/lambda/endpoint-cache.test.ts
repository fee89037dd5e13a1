import { EndpointCache } from '../../../lambda/endpoint-cache';

describe("EndpointCache (the Lambda bundles' stand-in for @aws-sdk/endpoint-cache)", () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 1_000_000 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('keeps endpoints for their cache period, then forgets them', () => {
    const cache = new EndpointCache(10);

    cache.set('key', [{ Address: 'a.example', CachePeriodInMinutes: 1 }]);

    expect(cache.has('key')).toBe(true);
    expect(cache.getEndpoint('key')).toBe('a.example');
    jest.advanceTimersByTime(60_000);
    expect(cache.get('key')).toBeUndefined();
    expect(cache.has('key')).toBe(false);
  });

  it('evicts the least recently used key beyond its capacity', () => {
    const cache = new EndpointCache(2);
    cache.set('first', [{ Address: 'first.example', CachePeriodInMinutes: 5 }]);
    cache.set('second', [{ Address: 'second.example', CachePeriodInMinutes: 5 }]);

    cache.get('first');
    cache.set('third', [{ Address: 'third.example', CachePeriodInMinutes: 5 }]);

    expect([cache.has('first'), cache.has('second'), cache.has('third')]).toEqual([true, false, true]);
  });

  it('deletes one key and clears them all', () => {
    const cache = new EndpointCache(5);
    cache.set('one', [{ Address: 'one.example', CachePeriodInMinutes: 5 }]);
    cache.set('two', [{ Address: 'two.example', CachePeriodInMinutes: 5 }]);

    cache.delete('one');
    expect([cache.has('one'), cache.has('two')]).toEqual([false, true]);
    cache.clear();
    expect(cache.has('two')).toBe(false);
  });
});
