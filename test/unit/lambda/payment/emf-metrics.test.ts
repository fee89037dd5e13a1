import { createEmfMetrics } from '../../../../lambda/payment/emf-metrics';
import { emfProblems } from '../../../support/emf';

function recording(now = 1_795_000_000_000) {
  const lines: string[] = [];
  const metrics = createEmfMetrics({
    namespace: 'Payments/Test',
    serviceName: 'PaymentApi-test',
    write: (line) => lines.push(line),
    now: () => now,
  });
  return { metrics, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

describe('metrics in CloudWatch embedded metric format', () => {
  it('writes one line per flush with the namespace, the one Service dimension and a count per metric', () => {
    const { metrics, entries } = recording();

    metrics.count('KeyRefreshSucceeded');
    metrics.count('Accepted');
    metrics.flush();

    expect(entries()).toEqual([
      {
        _aws: {
          Timestamp: 1_795_000_000_000,
          CloudWatchMetrics: [
            {
              Namespace: 'Payments/Test',
              Dimensions: [['Service']],
              Metrics: [
                { Name: 'KeyRefreshSucceeded', Unit: 'Count' },
                { Name: 'Accepted', Unit: 'Count' },
              ],
            },
          ],
        },
        Service: 'PaymentApi-test',
        KeyRefreshSucceeded: 1,
        Accepted: 1,
      },
    ]);
    expect(entries().map(emfProblems)).toEqual([[]]);
  });

  it('writes a metric counted twice once, with the sum', () => {
    const { metrics, entries } = recording();

    metrics.count('KeyRefreshFailed');
    metrics.count('KeyRefreshFailed');
    metrics.flush();

    expect(entries()[0]?.KeyRefreshFailed).toBe(2);
  });

  it('writes nothing when nothing was counted', () => {
    const { metrics, entries } = recording();

    metrics.flush();

    expect(entries()).toEqual([]);
  });

  it('starts afresh after a flush', () => {
    const { metrics, entries } = recording();

    metrics.count('ColdStart');
    metrics.count('Accepted');
    metrics.flush();
    metrics.flush();
    metrics.count('Unauthorized');
    metrics.flush();

    expect(
      entries().map((line) => Object.keys(line).filter((key) => key !== '_aws' && key !== 'Service')),
    ).toEqual([['ColdStart', 'Accepted'], ['Unauthorized']]);
  });
});

describe('the EMF specification check', () => {
  interface LineParts {
    readonly timestamp?: unknown;
    readonly dimensions?: string[][];
    readonly metric?: Record<string, string>;
  }

  /** A line with one metric A in namespace N, valid unless told otherwise; `top`: its top-level values. */
  function line(
    { timestamp = 1, dimensions = [], metric = { Name: 'A' } }: LineParts = {},
    top: Record<string, unknown> = { A: 1 },
  ): unknown {
    const directive = { Namespace: 'N', Dimensions: dimensions, Metrics: [metric] };
    return { _aws: { Timestamp: timestamp, CloudWatchMetrics: [directive] }, ...top };
  }

  it.each<[string, unknown, string]>([
    ['no _aws', { Accepted: 1 }, 'no _aws object'],
    [
      'a timestamp in seconds as text',
      line({ timestamp: '1795000000' }),
      '_aws.Timestamp is not epoch milliseconds',
    ],
    [
      'a dimension without a value',
      line({ dimensions: [['Service']] }),
      'dimension Service has no string value at the top level',
    ],
    ['a metric without a value', line({}, {}), 'metric A has no numeric value at the top level'],
    [
      'more than 100 values for one metric',
      line({}, { A: Array<number>(101).fill(1) }),
      'metric A has no numeric value at the top level',
    ],
    [
      'a unit CloudWatch does not know',
      line({ metric: { Name: 'A', Unit: 'Percentage' } }),
      'metric A has a unit CloudWatch does not know',
    ],
  ])('finds %s', (_label, emfLine, problem) => {
    expect(emfProblems(emfLine)).toContain(problem);
  });

  it('finds nothing wrong with the line that builds the others', () => {
    expect(emfProblems(line())).toEqual([]);
  });
});
