import {
  limitedHeaders,
  policyHeader,
  quotaPerWindow,
  rateLimitHeaders,
} from '../../../../../lambda/payment/rate-limit/headers';

describe('the RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-11)', () => {
  it.each([
    // The limit's own window, whole seconds: q at once, every w seconds.
    [
      { perSecond: 20, burst: 40 },
      { quota: 40, windowSeconds: 2 },
    ],
    [
      { perSecond: 20, burst: 20 },
      { quota: 20, windowSeconds: 1 },
    ],
    [
      { perSecond: 0.5, burst: 1 },
      { quota: 1, windowSeconds: 2 },
    ],
    [
      { perSecond: 0.1, burst: 3 },
      { quota: 3, windowSeconds: 30 },
    ],
    [
      { perSecond: 0.001, burst: 1 },
      { quota: 1, windowSeconds: 1000 },
    ],
    // A window that is not whole seconds: the rate, as a whole quota per whole window.
    [
      { perSecond: 20, burst: 30 },
      { quota: 20, windowSeconds: 1 },
    ],
    [
      { perSecond: 1000, burst: 10 },
      { quota: 1000, windowSeconds: 1 },
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
      { perSecond: Math.PI, burst: 4 },
      { quota: 3, windowSeconds: 1 },
    ],
  ])('writes the limit %o as a whole quota per whole window', (limit, expected) => {
    expect(quotaPerWindow(limit)).toEqual(expected);
  });

  it('names the policy and gives q and w', () => {
    expect(policyHeader({ perSecond: 0.5, burst: 1 })).toBe('"app";q=1;w=2');
  });

  it('says what is left and within how long', () => {
    expect(rateLimitHeaders({ perSecond: 20, burst: 40 }, 39, 1)).toEqual({
      'RateLimit-Policy': '"app";q=40;w=2',
      RateLimit: '"app";r=39;t=1',
    });
  });

  it('gives a 429 nothing left, and Retry-After at the end of the window', () => {
    expect(limitedHeaders({ perSecond: 20, burst: 40 }, 2)).toEqual({
      'Retry-After': '2',
      'RateLimit-Policy': '"app";q=40;w=2',
      RateLimit: '"app";r=0;t=2',
    });
  });
});
