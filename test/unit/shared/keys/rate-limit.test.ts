import { parseKeyring } from '../../../../shared/keys/keyring';
import { defaultBurst, readRateLimit } from '../../../../shared/keys/rate-limit';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

describe('readRateLimit', () => {
  it.each([
    [
      'a rate and a burst',
      { perSecond: 20, burst: 40 },
      { perSecond: 20, burst: 40 },
      { perSecond: 20, burst: 40 },
    ],
    [
      'a rate alone: one second of it may come at once',
      { perSecond: 20 },
      { perSecond: 20, burst: 20 },
      { perSecond: 20 },
    ],
    [
      'a fractional rate: at least one at once',
      { perSecond: 0.5 },
      { perSecond: 0.5, burst: 1 },
      { perSecond: 0.5 },
    ],
  ])('reads %s, keeping what was written', (_label, value, limit, written) => {
    expect(readRateLimit(value)).toEqual({ ok: true, limit, written });
  });

  it.each([
    ['not an object', 20, '"rateLimit" must be an object: {"perSecond": <number>, "burst": <whole number>}'],
    [
      'no rate',
      { burst: 10 },
      '"rateLimit"."perSecond" must be a number of requests per second from 0.001 to 10000',
    ],
    [
      'a zero rate',
      { perSecond: 0 },
      '"rateLimit"."perSecond" must be a number of requests per second from 0.001 to 10000',
    ],
    [
      'a rate as text',
      { perSecond: '20' },
      '"rateLimit"."perSecond" must be a number of requests per second from 0.001 to 10000',
    ],
    [
      'a fractional burst',
      { perSecond: 5, burst: 1.5 },
      '"rateLimit"."burst" must be a whole number of requests from 1 to 100000',
    ],
    [
      'a zero burst',
      { perSecond: 5, burst: 0 },
      '"rateLimit"."burst" must be a whole number of requests from 1 to 100000',
    ],
    [
      'an unknown field',
      { perSecond: 5, perMinute: 100 },
      '"rateLimit" field #2 is not one of "perSecond", "burst"',
    ],
  ])('refuses %s', (_label, value, reason) => {
    expect(readRateLimit(value)).toEqual({ ok: false, reason });
  });

  it('gives a default burst of one second of the rate, at least 1', () => {
    expect([defaultBurst(0.2), defaultBurst(1), defaultBurst(20.5)]).toEqual([1, 1, 21]);
  });
});

describe('rate limits in the secret', () => {
  it("keeps an app's own limit in the keyring; an app without one has none of its own", () => {
    const { keyring } = parseKeyring(
      JSON.stringify({ shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 20 } }, other: PARTNER_KEY }),
    );

    expect(keyring.get('shop')?.rateLimit).toEqual({ perSecond: 20, burst: 20 });
    expect(keyring.get('other')).not.toHaveProperty('rateLimit');
  });

  it('leaves the whole app out when its limit is malformed: it must not turn into no limit at all', () => {
    const { keyring, problems } = parseKeyring(
      JSON.stringify({ shop: { keys: [DEMO_KEY], rateLimit: { perSecond: -1 } }, other: PARTNER_KEY }),
    );

    expect([...keyring.keys()]).toEqual(['other']);
    expect(problems).toEqual([
      {
        entryPosition: 1,
        appId: 'shop',
        reason: '"rateLimit"."perSecond" must be a number of requests per second from 0.001 to 10000',
      },
    ]);
  });
});
