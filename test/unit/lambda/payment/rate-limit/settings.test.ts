import { readDefaultLimit, readRateLimitSettings } from '../../../../../lambda/payment/rate-limit/settings';

const COMPLETE = {
  RATE_LIMIT_TABLE: 'PaymentApi-RateLimits',
  RATE_LIMIT_PER_SECOND: '20',
  RATE_LIMIT_BURST: '40',
  RATE_LIMIT_FAILURE: 'closed',
};

describe('readRateLimitSettings', () => {
  it('reads what the stack sets, with the production deadline', () => {
    expect(readRateLimitSettings(COMPLETE)).toEqual({
      tableName: 'PaymentApi-RateLimits',
      defaultLimit: { perSecond: 20, burst: 40 },
      failure: 'closed',
      budgetMs: 150,
    });
  });

  it('fails local and gives one second of the rate as burst by default; takes a longer deadline for tests', () => {
    const settings = {
      RATE_LIMIT_TABLE: COMPLETE.RATE_LIMIT_TABLE,
      RATE_LIMIT_PER_SECOND: '0.5',
      RATE_LIMIT_DEADLINE_MS: '10000',
    };

    expect(readRateLimitSettings(settings)).toEqual({
      tableName: 'PaymentApi-RateLimits',
      defaultLimit: { perSecond: 0.5, burst: 1 },
      failure: 'local',
      budgetMs: 10_000,
    });
  });

  it('reads a rate as the stack writes it, however many decimals (String(1 / 3))', () => {
    expect(readRateLimitSettings({ ...COMPLETE, RATE_LIMIT_PER_SECOND: String(1 / 3) }).defaultLimit).toEqual(
      {
        perSecond: 1 / 3,
        burst: 40,
      },
    );
  });

  it.each([
    ['no table', { RATE_LIMIT_TABLE: '' }, 'RATE_LIMIT_TABLE must name the rate limit table'],
    [
      'no rate',
      { RATE_LIMIT_PER_SECOND: undefined, RATE_LIMIT_BURST: undefined },
      'RATE_LIMIT_PER_SECOND must be set',
    ],
    [
      'a rate of zero',
      { RATE_LIMIT_PER_SECOND: '0' },
      'RATE_LIMIT_PER_SECOND must be a number of requests per second from 0.001 to 10000, got "0"',
    ],
    [
      'a rate in words',
      { RATE_LIMIT_PER_SECOND: 'fast' },
      'RATE_LIMIT_PER_SECOND must be a number of requests per second from 0.001 to 10000, got "fast"',
    ],
    [
      'a fractional burst',
      { RATE_LIMIT_BURST: '1.5' },
      'RATE_LIMIT_BURST must be a whole number of requests from 1 to 100000, got "1.5"',
    ],
    [
      'an unknown failure mode',
      { RATE_LIMIT_FAILURE: 'ajar' },
      'RATE_LIMIT_FAILURE must be one of local, open, closed, got "ajar"',
    ],
    [
      'a deadline too short to mean anything',
      { RATE_LIMIT_DEADLINE_MS: '1' },
      'RATE_LIMIT_DEADLINE_MS must be a whole number of milliseconds from 10 to 60000',
    ],
  ])('refuses %s with one line naming the variable', (_label, change, message) => {
    expect(() => readRateLimitSettings({ ...COMPLETE, ...change })).toThrow(new Error(message));
  });
});

describe('readDefaultLimit', () => {
  it('reads nothing when the rate is absent', () => {
    expect(readDefaultLimit({}, 'APP_RATE_LIMIT', 'APP_RATE_BURST')).toBeUndefined();
  });

  it('refuses a burst without a rate', () => {
    expect(() => readDefaultLimit({ APP_RATE_BURST: '5' }, 'APP_RATE_LIMIT', 'APP_RATE_BURST')).toThrow(
      'APP_RATE_BURST needs APP_RATE_LIMIT',
    );
  });
});
