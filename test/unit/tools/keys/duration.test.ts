import { formatRemaining, MAX_DURATION_DAYS, parseDuration } from '../../../../tools/keys/duration';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('parseDuration', () => {
  it.each([
    ['90d', 90 * DAY],
    ['24h', 24 * HOUR],
    ['30m', 30 * MINUTE],
    ['45s', 45 * SECOND],
    ['0s', 0],
    ['0d', 0],
    [`${MAX_DURATION_DAYS}d`, MAX_DURATION_DAYS * DAY],
    [`${MAX_DURATION_DAYS * 24}h`, MAX_DURATION_DAYS * DAY],
  ])('reads %s', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each([
    ['no unit', '90'],
    ['no number', 'd'],
    ['an unknown unit', '2w'],
    ['an upper-case unit', '90D'],
    ['two units', '1d12h'],
    ['a fraction', '1.5h'],
    ['a sign', '-5m'],
    ['a plus sign', '+5m'],
    ['a leading zero', '07d'],
    ['spaces', ' 5m'],
    ['a space before the unit', '5 m'],
    ['an empty string', ''],
    ['a date', '2026-12-24T00:00:00Z'],
    ['a key', 'payk_' + 'A'.repeat(43)],
    ['more than the longest allowed', `${MAX_DURATION_DAYS + 1}d`],
    ['far more than the longest allowed', '999999999d'],
  ])('refuses %s', (_label, text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('formatRemaining', () => {
  it.each([
    [3 * DAY + 23 * HOUR, '3d'],
    [DAY, '1d'],
    [DAY - 1, '23h'],
    [5 * HOUR + 59 * MINUTE, '5h'],
    [HOUR - 1, '59m'],
    [MINUTE, '1m'],
    [MINUTE - 1, '<1m'],
    [1, '<1m'],
  ])('shows %i ms as %s, rounded down to its largest unit', (ms, text) => {
    expect(formatRemaining(ms)).toBe(text);
  });
});
