/**
 * Durations as the key CLI takes them (`90d`, `24h`, `30m`, `45s`: one whole number and one unit) and as `list`
 * shows what is left of one (`3d`, else `5h`, else `12m`). Pure.
 */

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000 } as const;

type Unit = keyof typeof UNIT_MS;

/** Past this, an expiry is "never" in all but name: `--never` says so plainly. */
export const MAX_DURATION_DAYS = 36_500;

const MAX_DURATION_MS = MAX_DURATION_DAYS * UNIT_MS.d;

export const DURATION_RULE = `one whole number and a unit, such as 90d, 24h, 30m or 45s (at most ${MAX_DURATION_DAYS}d)`;

// No sign, no fraction, no leading zero, no spaces, lower-case units: one spelling per duration.
const DURATION = /^(0|[1-9][0-9]{0,8})([dhms])$/;

function isUnit(value: string): value is Unit {
  return Object.hasOwn(UNIT_MS, value);
}

/** The duration in milliseconds, or undefined when `text` is not one (or is longer than MAX_DURATION_DAYS). */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text);
  const [, amount, unit] = match ?? [];
  if (amount === undefined || unit === undefined || !isUnit(unit)) return undefined;
  const ms = Number(amount) * UNIT_MS[unit];
  return ms <= MAX_DURATION_MS ? ms : undefined;
}

/**
 * What is left of a positive span, compactly and rounded down: whole days, else whole hours, else whole minutes;
 * `<1m` under a minute. "expires in 3d" then means at least three days.
 */
export function formatRemaining(ms: number): string {
  for (const unit of ['d', 'h', 'm'] as const) {
    const amount = Math.floor(ms / UNIT_MS[unit]);
    if (amount >= 1) return `${amount}${unit}`;
  }
  return '<1m';
}
