import { formatTimestamp, parseTimestamp } from '../../../../shared/keys/timestamp';

const CHRISTMAS_EVE = Date.UTC(2026, 11, 24);

describe('parseTimestamp', () => {
  it.each([
    ['UTC with Z', '2026-12-24T00:00:00Z', CHRISTMAS_EVE],
    ['an offset', '2026-12-24T01:00:00+01:00', CHRISTMAS_EVE],
    ['a negative offset', '2026-12-23T19:00:00-05:00', CHRISTMAS_EVE],
    ['fractional seconds', '2026-12-24T00:00:00.250Z', CHRISTMAS_EVE + 250],
    ['lower-case t and z, which RFC 3339 allows', '2026-12-24t00:00:00z', CHRISTMAS_EVE],
    ['29 February of a leap year', '2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
  ])('reads %s', (_label, text, instant) => {
    expect(parseTimestamp(text)).toBe(instant);
  });

  it.each([
    ['a date without a time', '2026-12-24'],
    ['a time without an offset, which would be local time', '2026-12-24T00:00:00'],
    ['a space instead of T', '2026-12-24 00:00:00Z'],
    ['30 February, which Date.parse would roll over to March', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2026-02-29T00:00:00Z'],
    ['hour 24', '2026-12-24T24:00:00Z'],
    ['a leap second', '2026-12-31T23:59:60Z'],
    ['an offset of 24 hours', '2026-12-24T00:00:00+24:00'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['a date in words', 'Dec 24 2026 00:00:00 GMT'],
    ['a number of milliseconds', '1798070400000'],
    ['nothing', ''],
  ])('refuses %s', (_label, text) => {
    expect(parseTimestamp(text)).toBeUndefined();
  });
});

describe('formatTimestamp', () => {
  it('writes UTC with Z and no milliseconds when there are none', () => {
    expect(formatTimestamp(CHRISTMAS_EVE)).toBe('2026-12-24T00:00:00Z');
  });

  it('keeps milliseconds when there are some, and reads back to the same instant', () => {
    const text = formatTimestamp(CHRISTMAS_EVE + 5);

    expect(text).toBe('2026-12-24T00:00:00.005Z');
    expect(parseTimestamp(text)).toBe(CHRISTMAS_EVE + 5);
  });
});
