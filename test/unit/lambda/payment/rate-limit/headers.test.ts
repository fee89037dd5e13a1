import {
  limitedHeaders,
  policyHeader,
  quotaPerWindow,
  rateLimitHeaders,
} from '../../../../../lambda/payment/rate-limit/headers';

describe('the RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  it.each([
    [
      { perSecond: 20, burst: 40 },
      { quota: 20, windowSeconds: 1 },
    ],
    [
      { perSecond: 0.5, burst: 1 },
      { quota: 1, windowSeconds: 2 },
    ],
    [
      { perSecond: 0.3, burst: 1 },
      { quota: 3, windowSeconds: 10 },
    ],
    [
      { perSecond: 2.5, burst: 3 },
      { quota: 5, windowSeconds: 2 },
    ],
    [
      { perSecond: 0.001, burst: 1 },
      { quota: 1, windowSeconds: 1000 },
    ],
    [
      { perSecond: Math.PI, burst: 4 },
      { quota: 3, windowSeconds: 1 },
    ],
  ])('writes the rate %o as a whole quota per whole window', (limit, expected) => {
    expect(quotaPerWindow(limit)).toEqual(expected);
  });

  it('names the policy and gives q and w', () => {
    expect(policyHeader({ perSecond: 0.5, burst: 1 })).toBe('"app";q=1;w=2');
  });

  it('says what is left and within how long', () => {
    expect(rateLimitHeaders({ perSecond: 20, burst: 40 }, 39, 1)).toEqual({
      'RateLimit-Policy': '"app";q=20;w=1',
      RateLimit: '"app";r=39;t=1',
    });
  });

  it('gives a 429 Retry-After no earlier than the end of the effective window', () => {
    expect(limitedHeaders({ perSecond: 20, burst: 40 }, 3)).toEqual({
      'Retry-After': '3',
      'RateLimit-Policy': '"app";q=20;w=1',
      RateLimit: '"app";r=0;t=3',
    });
  });
});
