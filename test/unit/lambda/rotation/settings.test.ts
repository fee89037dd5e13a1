import { readRotationSettings } from '../../../../lambda/rotation/settings';

/** What the stack always sets: a 30-day period. */
const PERIOD = { ROTATION_PERIOD_HOURS: '720' };

describe('readRotationSettings', () => {
  it.each([
    // Two by default: the fresh key and the one clients hold now.
    ['absent', {}, 2],
    ['empty', { ROTATION_KEEP_KEYS: '' }, 2],
    ['2', { ROTATION_KEEP_KEYS: '2' }, 2],
    ['10', { ROTATION_KEEP_KEYS: '10' }, 10],
  ])('reads ROTATION_KEEP_KEYS %s', (_label, env, expected) => {
    expect(readRotationSettings({ ...PERIOD, ...env }).keep).toBe(expected);
  });

  it.each(['1', '0', '11', '-3', '2.5', 'two', ' 2'])('refuses ROTATION_KEEP_KEYS=%p', (raw) => {
    expect(() => readRotationSettings({ ...PERIOD, ROTATION_KEEP_KEYS: raw })).toThrow(
      `ROTATION_KEEP_KEYS must be a whole number from 2 to 10, got "${raw}"`,
    );
  });

  it.each([
    ['4', 4 * 3_600_000],
    ['720', 30 * 86_400_000],
    ['24000', 1000 * 86_400_000],
  ])('reads ROTATION_PERIOD_HOURS=%s as the period in milliseconds', (raw, periodMs) => {
    expect(readRotationSettings({ ROTATION_PERIOD_HOURS: raw }).periodMs).toBe(periodMs);
  });

  it.each([
    ['absent', {}],
    ['empty', { ROTATION_PERIOD_HOURS: '' }],
  ])('refuses ROTATION_PERIOD_HOURS %s: superseded keys would get a guessed expiry', (_label, env) => {
    expect(() => readRotationSettings(env)).toThrow(
      'ROTATION_PERIOD_HOURS must be set to the hours between two rotations',
    );
  });

  it.each(['0', '24001', '1.5', '30d', '-4'])('refuses ROTATION_PERIOD_HOURS=%p', (raw) => {
    expect(() => readRotationSettings({ ROTATION_PERIOD_HOURS: raw })).toThrow(
      `ROTATION_PERIOD_HOURS must be a whole number from 1 to 24000, got "${raw}"`,
    );
  });

  it.each([
    [undefined, 'info'],
    ['debug', 'debug'],
    ['WARN', 'warn'],
    ['', 'info'],
  ])('reads LOG_LEVEL %p as %p', (raw, expected) => {
    expect(readRotationSettings({ ...PERIOD, LOG_LEVEL: raw }).logLevel).toBe(expected);
  });

  it('refuses an unknown LOG_LEVEL, naming the variable', () => {
    expect(() => readRotationSettings({ ...PERIOD, LOG_LEVEL: 'nonsense' })).toThrow(
      'LOG_LEVEL must be one of debug, info, warn, error, got "nonsense"',
    );
  });

  it('reads the key prefix (default pay) and refuses payk, under which every legacy key would be malformed', () => {
    expect(readRotationSettings({ ...PERIOD }).keyPrefix).toBe('pay');
    expect(readRotationSettings({ ...PERIOD, KEY_PREFIX: 'acme' }).keyPrefix).toBe('acme');
    expect(() => readRotationSettings({ ...PERIOD, KEY_PREFIX: 'payk' })).toThrow(
      'KEY_PREFIX must not be "payk" or start with "payk_": legacy keys (payk_...) would all be refused as malformed, got "payk"',
    );
  });
});
