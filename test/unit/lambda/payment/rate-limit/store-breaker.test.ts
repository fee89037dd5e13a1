import {
  BREAKER_PROBE_INTERVAL_MS,
  StoreBreaker,
} from '../../../../../lambda/payment/rate-limit/store-breaker';

const FAILED = { failed: true, error: 'TimeoutError: no answer within 140 ms' } as const;
const ANSWERED = { failed: false } as const;

describe('StoreBreaker', () => {
  let now: number;
  let breaker: StoreBreaker;

  beforeEach(() => {
    now = 1_000_000;
    breaker = new StoreBreaker(() => now);
  });

  it('lets every call through while closed', () => {
    expect(breaker.admit()).toEqual({ call: true, probe: false });
    breaker.record(FAILED);
    expect(breaker.admit()).toEqual({ call: true, probe: false });
  });

  it('opens when three calls in a row failed, and says why', () => {
    for (const outcome of [FAILED, ANSWERED, FAILED, FAILED, FAILED]) breaker.record(outcome);

    expect(breaker.isOpen()).toBe(true);
    expect(breaker.admit()).toEqual({
      call: false,
      reason: `rate limit store not called: the breaker is open (${FAILED.error}); next probe in ${BREAKER_PROBE_INTERVAL_MS} ms`,
    });
  });

  it('stays closed while every third call or more is answered', () => {
    for (const outcome of [FAILED, FAILED, ANSWERED, FAILED, FAILED, ANSWERED, FAILED])
      breaker.record(outcome);

    expect(breaker.isOpen()).toBe(false);
  });

  it('lets one probe through per interval, alone, and closes when it is answered', () => {
    for (let i = 0; i < 3; i++) breaker.record(FAILED);

    now += BREAKER_PROBE_INTERVAL_MS - 1;
    expect(breaker.admit().call).toBe(false);
    now += 1;
    expect(breaker.admit()).toEqual({ call: true, probe: true });
    expect(breaker.admit()).toMatchObject({
      call: false,
      reason: expect.stringContaining('a probe is under way') as unknown,
    });
    breaker.record(FAILED);
    expect(breaker.admit().call).toBe(false);
    now += BREAKER_PROBE_INTERVAL_MS;
    expect(breaker.admit()).toEqual({ call: true, probe: true });
    breaker.record(ANSWERED);

    expect(breaker.isOpen()).toBe(false);
    expect(breaker.admit()).toEqual({ call: true, probe: false });
  });

  it('makes at most one call a second while the store stays down, however many requests come', () => {
    for (let i = 0; i < 3; i++) breaker.record(FAILED);
    const calls: number[] = [];
    for (let at = 0; at < 10_000; at += 7) {
      now = 1_000_000 + at;
      if (breaker.admit().call) {
        calls.push(at);
        breaker.record(FAILED);
      }
    }

    expect(calls).toHaveLength(9);
    for (let index = 1; index < calls.length; index++) {
      expect((calls[index] ?? 0) - (calls[index - 1] ?? 0)).toBeGreaterThanOrEqual(BREAKER_PROBE_INTERVAL_MS);
    }
  });
});
