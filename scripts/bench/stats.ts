/** Small helpers for printing measured figures. */
export const fmt = (value: number, digits = 1): string => value.toFixed(digits);

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

export const median = (values: readonly number[]): number => percentile(values, 50);

/** `min a, median b, max c`, for figures measured several times. */
export function spread(values: readonly number[], digits = 2, unit = ''): string {
  return `min ${fmt(Math.min(...values), digits)}${unit}, median ${fmt(median(values), digits)}${unit}, max ${fmt(Math.max(...values), digits)}${unit}`;
}
