import { DEFAULT_ROTATION_KEEP_KEYS, readRotationSettings } from '../../../../lambda/rotation/settings';

describe('readRotationSettings', () => {
  it.each([
    ['absent', {}, DEFAULT_ROTATION_KEEP_KEYS],
    ['empty', { ROTATION_KEEP_KEYS: '' }, DEFAULT_ROTATION_KEEP_KEYS],
    ['2', { ROTATION_KEEP_KEYS: '2' }, 2],
    ['5', { ROTATION_KEEP_KEYS: '5' }, 5],
  ])('reads ROTATION_KEEP_KEYS %s', (_label, env, expected) => {
    expect(readRotationSettings(env).keep).toBe(expected);
  });

  it('keeps two keys by default: the fresh one and the one clients hold now', () => {
    expect(DEFAULT_ROTATION_KEEP_KEYS).toBe(2);
  });

  it.each(['1', '0', '-3', '2.5', 'two', ' 2'])('refuses ROTATION_KEEP_KEYS=%p', (raw) => {
    expect(() => readRotationSettings({ ROTATION_KEEP_KEYS: raw })).toThrow(
      `ROTATION_KEEP_KEYS must be a whole number of at least 2, got "${raw}"`,
    );
  });

  it.each([
    [undefined, 'info'],
    ['debug', 'debug'],
    ['WARN', 'warn'],
    ['', 'info'],
  ])('reads LOG_LEVEL %p as %p', (raw, expected) => {
    expect(readRotationSettings({ LOG_LEVEL: raw }).logLevel).toBe(expected);
  });

  it('refuses an unknown LOG_LEVEL, naming the variable', () => {
    expect(() => readRotationSettings({ LOG_LEVEL: 'nonsense' })).toThrow(
      'LOG_LEVEL must be one of debug, info, warn, error, got "nonsense"',
    );
  });
});
