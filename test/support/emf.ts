/**
 * Reads CloudWatch embedded metric format lines out of a Lambda's output and checks each against the EMF
 * specification: `_aws.Timestamp` (epoch milliseconds), `_aws.CloudWatchMetrics[]` with `Namespace`,
 * `Dimensions` (arrays of dimension names) and `Metrics` (`Name`, optional `Unit` among CloudWatch's units), and
 * every dimension and metric it names present at the top level (a dimension as a string, a metric as a number or
 * an array of 1 to 100 numbers).
 */

export interface EmfLine {
  readonly namespace: string;
  readonly dimensionSets: readonly (readonly string[])[];
  readonly dimensions: Readonly<Record<string, string>>;
  /** Each metric's values summed (an array of values is one sample each): what Sum reads. */
  readonly counts: Readonly<Record<string, number>>;
  /** Each metric's values one by one: what Maximum and Average read. */
  readonly samples: Readonly<Record<string, readonly number[]>>;
  readonly units: Readonly<Record<string, string | undefined>>;
}

/** The units CloudWatch accepts for a metric (MetricDatum.Unit). */
const CLOUDWATCH_UNITS = new Set([
  'Seconds',
  'Microseconds',
  'Milliseconds',
  'Bytes',
  'Kilobytes',
  'Megabytes',
  'Gigabytes',
  'Terabytes',
  'Bits',
  'Kilobits',
  'Megabits',
  'Gigabits',
  'Terabits',
  'Percent',
  'Count',
  'Bytes/Second',
  'Kilobytes/Second',
  'Megabytes/Second',
  'Gigabytes/Second',
  'Terabytes/Second',
  'Bits/Second',
  'Kilobits/Second',
  'Megabits/Second',
  'Gigabits/Second',
  'Terabits/Second',
  'Count/Second',
  'None',
]);

/** The most values one metric may carry in one line. */
const MAX_VALUES = 100;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The problems with one parsed EMF object, by the specification; [] when it conforms. */
export function emfProblems(line: unknown): string[] {
  if (!isRecord(line) || !isRecord(line._aws)) return ['no _aws object'];
  const problems: string[] = [];
  const { Timestamp: timestamp, CloudWatchMetrics: directives } = line._aws;
  if (typeof timestamp !== 'number' || !Number.isInteger(timestamp) || timestamp <= 0) {
    problems.push('_aws.Timestamp is not epoch milliseconds');
  }
  if (!Array.isArray(directives) || directives.length === 0) return [...problems, 'no CloudWatchMetrics'];
  for (const directive of directives as unknown[]) {
    if (!isRecord(directive)) {
      problems.push('a CloudWatchMetrics entry is not an object');
      continue;
    }
    if (typeof directive.Namespace !== 'string' || directive.Namespace === '') problems.push('no Namespace');
    const sets = directive.Dimensions;
    if (!Array.isArray(sets)) problems.push('Dimensions is not an array');
    else {
      for (const set of sets as unknown[]) {
        if (!Array.isArray(set) || set.length > 30) problems.push('a dimension set is not an array of names');
        else {
          for (const name of set as unknown[]) {
            if (typeof name !== 'string' || typeof line[name] !== 'string') {
              problems.push(`dimension ${String(name)} has no string value at the top level`);
            }
          }
        }
      }
    }
    const metrics = directive.Metrics;
    if (!Array.isArray(metrics) || metrics.length === 0 || metrics.length > 100) problems.push('bad Metrics');
    else {
      for (const metric of metrics as unknown[]) {
        const name = isRecord(metric) ? metric.Name : undefined;
        const unit = isRecord(metric) ? metric.Unit : undefined;
        const value = typeof name === 'string' ? line[name] : undefined;
        const numeric =
          (typeof value === 'number' && Number.isFinite(value)) ||
          (Array.isArray(value) &&
            value.length > 0 &&
            value.length <= MAX_VALUES &&
            value.every((item) => typeof item === 'number' && Number.isFinite(item)));
        if (typeof name !== 'string' || !numeric) {
          problems.push(`metric ${String(name)} has no numeric value at the top level`);
        }
        if (unit !== undefined && (typeof unit !== 'string' || !CLOUDWATCH_UNITS.has(unit))) {
          problems.push(`metric ${String(name)} has a unit CloudWatch does not know`);
        }
      }
    }
  }
  return problems;
}

/** Every line of `output` that is an EMF object, read; lines that are not JSON objects with `_aws` are skipped. */
export function readEmfLines(output: string): { readonly raw: unknown[]; readonly lines: EmfLine[] } {
  const raw = output
    .split('\n')
    .filter((text) => text.startsWith('{') && text.includes('"_aws"'))
    .map((text) => JSON.parse(text) as unknown);
  const lines = raw.filter(isRecord).map((line): EmfLine => {
    const [directive] = (
      isRecord(line._aws) && Array.isArray(line._aws.CloudWatchMetrics) ? line._aws.CloudWatchMetrics : []
    ) as unknown[];
    const spec = isRecord(directive) ? directive : {};
    const sets = (Array.isArray(spec.Dimensions) ? spec.Dimensions : []) as string[][];
    const metrics = (Array.isArray(spec.Metrics) ? spec.Metrics : []) as { Name: string; Unit?: string }[];
    const valuesOf = (value: unknown): number[] =>
      Array.isArray(value) ? value.map((item) => Number(item)) : [Number(value)];
    const sum = (values: readonly number[]): number => values.reduce((total, item) => total + item, 0);
    return {
      namespace: String(spec.Namespace),
      dimensionSets: sets,
      dimensions: Object.fromEntries(sets.flat().map((name) => [name, String(line[name])])),
      counts: Object.fromEntries(metrics.map((metric) => [metric.Name, sum(valuesOf(line[metric.Name]))])),
      samples: Object.fromEntries(metrics.map((metric) => [metric.Name, valuesOf(line[metric.Name])])),
      units: Object.fromEntries(metrics.map((metric) => [metric.Name, metric.Unit])),
    };
  });
  return { raw, lines };
}

/** The counts of all lines added up per metric, leaving out the metrics named in `levels` (they are not summed). */
export function totalCounts(
  lines: readonly EmfLine[],
  levels: readonly string[] = [],
): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of lines) {
    for (const [name, count] of Object.entries(line.counts)) {
      if (!levels.includes(name)) totals[name] = (totals[name] ?? 0) + count;
    }
  }
  return totals;
}

/** Every sample of one metric across the lines, in order. */
export function samplesOf(lines: readonly EmfLine[], name: string): number[] {
  return lines.flatMap((line) => line.samples[name] ?? []);
}

/** The JSON log lines of `output` (EMF lines left out) whose message is one of `messages`, read. */
export function logEntries(output: string, ...messages: readonly string[]): Record<string, unknown>[] {
  return output
    .split('\n')
    .filter((text) => text.startsWith('{') && !text.includes('"_aws"'))
    .map((text) => JSON.parse(text) as Record<string, unknown>)
    .filter((entry) => messages.includes(String(entry.message)));
}
