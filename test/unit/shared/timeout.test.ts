import { raceWithTimeout } from '../../../shared/timeout';

describe('raceWithTimeout', () => {
  beforeEach(() => {
    jest.useFakeTimers();
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it('settles with the work when it finishes first, and clears its timer', async () => {
    const onTimeout = jest.fn(() => 'late');

    await expect(raceWithTimeout(Promise.resolve('done'), 1_000, onTimeout)).resolves.toBe('done');

    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(2_000);
    expect(onTimeout).not.toHaveBeenCalled();
  });

  it("passes on the work's own failure when it fails first", async () => {
    await expect(raceWithTimeout(Promise.reject(new Error('refused')), 1_000, () => 'late')).rejects.toThrow(
      'refused',
    );
    expect(jest.getTimerCount()).toBe(0);
  });

  it('settles with what onTimeout returns once the time has passed', async () => {
    const never = new Promise<string>(() => undefined);

    const raced = raceWithTimeout(never, 1_000, () => undefined);
    jest.advanceTimersByTime(999);
    const early = await Promise.race([raced, Promise.resolve('pending')]);
    jest.advanceTimersByTime(1);

    expect(early).toBe('pending');
    await expect(raced).resolves.toBeUndefined();
  });

  it('rejects with what onTimeout throws', async () => {
    const never = new Promise<string>(() => undefined);

    const raced = raceWithTimeout(never, 500, (): never => {
      throw new Error('deadline passed');
    });
    jest.advanceTimersByTime(500);

    await expect(raced).rejects.toThrow('deadline passed');
  });
});
