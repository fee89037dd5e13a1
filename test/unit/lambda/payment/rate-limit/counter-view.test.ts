import {
  CounterView,
  MIN_PARTICIPATION,
  QUIET_MS,
} from '../../../../../lambda/payment/rate-limit/counter-view';

/** 1-second windows; a request every `gapMs` from window `first` on. */
const LENGTH_MS = 1_000;

describe('CounterView: what an environment knows of one counter', () => {
  it('takes part in every window while the app has never been seen past its limit', () => {
    const view = new CounterView(LENGTH_MS);
    const roll = jest.fn(() => 0.99);

    for (let window = 0; window < 10; window++) {
      view.noteRequest(window, window * LENGTH_MS, roll);
      view.counted(window, 3, 10, view.beginCall());
      expect(view.sitsOut()).toBe(false);
    }
    expect(roll).not.toHaveBeenCalled();
    expect(view.chance).toBe(1);
  });

  it('remembers a full window until it ends, and only that one', () => {
    const view = new CounterView(LENGTH_MS);
    view.noteRequest(5, 5_000, () => 0);
    view.full(5, view.beginCall());

    expect(view.knownFull(5)).toBe(true);
    expect(view.knownFull(6)).toBe(false);
  });

  it('knows a window is full when its own write took the last request, without a refused write', () => {
    const view = new CounterView(LENGTH_MS);
    view.noteRequest(5, 5_000, () => 0);
    view.counted(5, 10, 10, view.beginCall());

    expect(view.knownFull(5)).toBe(true);
  });

  it('halves its chance each time its first call finds the window spent, doubles it when counted, never below the least', () => {
    const view = new CounterView(LENGTH_MS);
    const chances: number[] = [];
    // The first call of each window: spent before it asked, eleven times, then counted twice.
    const outcomes = [
      ...Array.from({ length: 11 }, () => 'full' as const),
      'counted' as const,
      'counted' as const,
    ];
    outcomes.forEach((outcome, window) => {
      view.noteRequest(window, window * LENGTH_MS + 10, () => 0);
      const first = view.beginCall();
      if (outcome === 'full') view.full(window, first);
      else view.counted(window, 1, 10, first);
      chances.push(view.chance);
    });

    expect(chances.slice(0, 9)).toEqual([
      1 / 2,
      1 / 4,
      1 / 8,
      1 / 16,
      1 / 32,
      1 / 64,
      1 / 128,
      1 / 256,
      1 / 256,
    ]);
    expect(view.chance).toBe(MIN_PARTICIPATION * 4);
  });

  it('grows its chance a little for each window it sits out, so a chance knocked low comes back without help', () => {
    const view = new CounterView(LENGTH_MS);
    for (let window = 0; window < 8; window++) {
      view.noteRequest(window, window * LENGTH_MS + 10, () => 0);
      view.full(window, view.beginCall());
    }
    const knockedDown = view.chance;

    // 64 windows sat out (every roll above the chance): doubled, and no call made to learn it.
    for (let window = 8; window < 72; window++) {
      view.noteRequest(window, window * LENGTH_MS + 10, () => 0.999);
      expect(view.sitsOut()).toBe(true);
    }

    expect(knockedDown).toBe(1 / 256);
    expect(view.chance).toBeCloseTo(2 * knockedDown, 12);
  });

  it('changes its chance only by the first call of a window', () => {
    const view = new CounterView(LENGTH_MS);
    view.noteRequest(0, 10, () => 0);
    view.counted(0, 9, 10, view.beginCall());
    view.full(0, view.beginCall());

    expect(view.chance).toBe(1);
  });

  it('sits out a window when its roll is above its chance, and refuses without a call', () => {
    const view = new CounterView(LENGTH_MS);
    view.noteRequest(0, 10, () => 0);
    view.full(0, view.beginCall());

    view.noteRequest(1, 1_010, () => 0.7);
    expect(view.sitsOut()).toBe(true);
    view.noteRequest(2, 2_010, () => 0.3);
    expect(view.sitsOut()).toBe(false);
  });

  it(`takes part in every window again after a quiet spell (a whole window, and at least ${QUIET_MS} ms)`, () => {
    const view = new CounterView(LENGTH_MS);
    view.noteRequest(0, 10, () => 0);
    view.full(0, view.beginCall());
    view.noteRequest(1, 1_010, () => 0.9);
    expect(view.sitsOut()).toBe(true);

    view.noteRequest(3, 3_011, () => 0.9);

    expect(view.sitsOut()).toBe(false);
    expect(view.chance).toBe(1);
  });

  it('counts a throttle as full when it saw the window full this window or the last, and as the store failing otherwise', () => {
    const busy = new CounterView(LENGTH_MS);
    busy.noteRequest(7, 7_010, () => 0);
    busy.full(7, busy.beginCall());
    busy.noteRequest(8, 8_010, () => 0);

    expect(busy.throttled(8, busy.beginCall(), 'ProvisionedThroughputExceededException')).toBe(true);
    expect(busy.knownFull(8)).toBe(true);

    const calm = new CounterView(LENGTH_MS);
    calm.noteRequest(8, 8_010, () => 0);
    expect(calm.throttled(8, calm.beginCall(), 'ProvisionedThroughputExceededException')).toBe(false);
    expect(calm.knownFull(8)).toBe(false);
    expect(calm.knownThrottled(8)).toBe('ProvisionedThroughputExceededException');
    expect(calm.knownThrottled(9)).toBeUndefined();
  });
});
