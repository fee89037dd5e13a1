/**
 * Reads CloudWatch embedded metric format lines out of a Lambda's output and checks each against the EMF
 * specification: `_aws.Timestamp` (epoch milliseconds), `_aws.CloudWatchMetrics[]` with `Namespace`,
 * `Dimensions` (arrays of dimension names) and `Metrics` (`Name`, optional `Unit`), and every dimension and metric
 * it names present at the top level (a dimension as a string, a metric as a number or an array of numbers).
 */

export interface EmfLine {
  readonly namespace: string;
  readonly dimensionSets: readonly (readonly string[])[];
  readonly dimensions: Readonly<Record<string, string>>;
  /** Each metric's values summed (an array of values is one sample each). */
  readonly counts: Readonly<Record<string, number>>;
  readonly units: Readonly<Record<string, string | undefined>>;
}

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
        const value = typeof name === 'string' ? line[name] : undefined;
        const numeric =
          typeof value === 'number' ||
          (Array.isArray(value) && value.length > 0 && value.every((item) => typeof item === 'number'));
        if (typeof name !== 'string' || !numeric) {
          problems.push(`metric ${String(name)} has no numeric value at the top level`);
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
    const sum = (value: unknown): number =>
      Array.isArray(value) ? value.reduce((total: number, item) => total + Number(item), 0) : Number(value);
    return {
      namespace: String(spec.Namespace),
      dimensionSets: sets,
      dimensions: Object.fromEntries(sets.flat().map((name) => [name, String(line[name])])),
      counts: Object.fromEntries(metrics.map((metric) => [metric.Name, sum(line[metric.Name])])),
      units: Object.fromEntries(metrics.map((metric) => [metric.Name, metric.Unit])),
    };
  });
  return { raw, lines };
}

/** The counts of all lines added up per metric. */
export function totalCounts(lines: readonly EmfLine[]): Record<string, number> {
  const totals: Record<string, number> = {};
  for (const line of lines) {
    for (const [name, count] of Object.entries(line.counts)) totals[name] = (totals[name] ?? 0) + count;
  }
  return totals;
}
