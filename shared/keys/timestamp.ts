/**
 * RFC 3339 date-times (`2026-12-24T00:00:00Z`, `2026-12-24T01:00:00+01:00`), as the secret's `expires` holds them.
 *
 * Date.parse alone is not strict enough for a field that decides access: it accepts a date without a time or an
 * offset (read as UTC or local time), and rolls an impossible date over (`2026-02-30` becomes 2 March). So the text
 * must have RFC 3339's date-time shape, every field must be in range for its calendar month, and only then does
 * Date.parse turn it into an instant. A leap second (`:60`) is refused: JavaScript time has none.
 */
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d{1,9})?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** The instant (epoch milliseconds) an RFC 3339 date-time with `Z` or an offset names; undefined if it is not one. */
export function parseTimestamp(text: string): number | undefined {
  const match = DATE_TIME.exec(text);
  if (match === null) return undefined;
  // Groups that did not take part (no offset after Z) are undefined, whatever RegExpExecArray's type says.
  const groups = match.slice(1) as (string | undefined)[];
  const [year, month, day, hour, minute, second, , offsetHour = 0, offsetMinute = 0] = groups.map((field) =>
    field === undefined || field === '+' || field === '-' ? undefined : Number(field),
  );
  if (year === undefined || month === undefined || day === undefined) return undefined;
  const inRange =
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    (hour ?? 99) <= 23 &&
    (minute ?? 99) <= 59 &&
    (second ?? 99) <= 59 &&
    offsetHour <= 23 &&
    offsetMinute <= 59;
  if (!inRange) return undefined;
  const instant = Date.parse(text.toUpperCase());
  return Number.isFinite(instant) ? instant : undefined;
}

/** `2026-12-24T00:00:00Z`: UTC, milliseconds only when there are some, as the key CLI writes `expires`. */
export function formatTimestamp(instant: number): string {
  return new Date(instant).toISOString().replace('.000Z', 'Z');
}

export const TIMESTAMP_RULE = 'an RFC 3339 date-time with Z or an offset, such as 2026-12-24T00:00:00Z';
