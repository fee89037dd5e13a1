import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { METRIC } from '../../../lambda/payment/metric-names';
import { REGISTRY_METRIC_UNITS } from '../../../lambda/registry-monitor/metric-names';
import { LOG_FIELDS } from '../../../shared/log-fields';
import type { MonitoringOptions } from '../../../lib/monitoring';
import type { PaymentApiProps } from '../../../lib/payment-api';
import {
  constructUnbundled,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  policyStatements,
  resourcesOf,
  sharedTemplate,
  synthesize,
  synthesizeStack,
} from '../../support/construct-template';
import { PROJECT_ROOT } from '../../support/markdown';

/** Every alarm of the template by its name. */
function alarmsByName(template: Template): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.values(resourcesOf(template, 'AWS::CloudWatch::Alarm')).map((alarm) => [
      String(alarm.Properties.AlarmName),
      alarm.Properties,
    ]),
  );
}

/** The dashboard body as one string, tokens (alarm ARNs, the Region) rendered as their JSON. */
function dashboardBody(template: Template): string {
  const [dashboard] = Object.values(resourcesOf(template, 'AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  return body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
}

const CUSTOM = { namespace: 'PaymentApi', dimensions: [{ Name: 'Service', Value: 'Test' }] };

/** With per-app rate limits and an alarm topic, as on-call would run it. */
const RATE_LIMITED: PaymentApiProps = {
  appRateLimit: { perSecond: 20 },
  monitoring: { alarmEmail: 'oncall@example.com' },
};
/** With scheduled rotation, which adds the RotationFailing alarm, and an alarm topic. */
const ROTATING: PaymentApiProps = {
  rotation: { every: Duration.days(30) },
  monitoring: { alarmEmail: 'oncall@example.com' },
};

/** An alarm on one metric, in one line: `<namespace> <metric> <statistic>/<period s> <datapoints>/<evaluations> <comparison> <threshold> <missing data>`. */
function alarmShape(alarm: Record<string, unknown> | undefined): string {
  const comparison: Record<string, string> = {
    GreaterThanThreshold: '>',
    GreaterThanOrEqualToThreshold: '>=',
  };
  return [
    alarm?.Namespace,
    alarm?.MetricName,
    `${String(alarm?.Statistic ?? alarm?.ExtendedStatistic)}/${String(alarm?.Period)}`,
    `${String(alarm?.DatapointsToAlarm)}/${String(alarm?.EvaluationPeriods)}`,
    comparison[String(alarm?.ComparisonOperator)] ?? alarm?.ComparisonOperator,
    alarm?.Threshold,
    alarm?.TreatMissingData,
  ].join(' ');
}

/** What each alarm on one metric watches and how, in the construct synthesized in stack "Test" with default props. */
const DEFAULT_ALARMS: [string, string][] = [
  ['ApiServerErrors', 'AWS/ApiGateway 5XXError Average/60 3/5 > 0.01 notBreaching'],
  ['ApiLatencyP99', 'AWS/ApiGateway Latency p99/60 5/5 > 1000 notBreaching'],
  ['LambdaErrors', 'AWS/Lambda Errors Sum/60 1/5 >= 1 notBreaching'],
  ['LambdaThrottles', 'AWS/Lambda Throttles Sum/60 1/5 >= 1 notBreaching'],
  ['KeysUnavailable', 'PaymentApi Unavailable Sum/60 1/5 >= 1 notBreaching'],
  ['KeyRefreshFailing', 'PaymentApi KeyRefreshFailed Sum/60 3/5 >= 1 notBreaching'],
  ['UnauthorizedRequests', 'PaymentApi Unauthorized Sum/300 1/1 >= 100 notBreaching'],
  // Measured once an hour by the monitor: an hour without a measurement neither raises nor clears them.
  ['KeysExpiringSoon', 'PaymentApi KeysExpiringSoon Maximum/3600 1/1 > 0 ignore'],
  ['SecretNearlyFull', 'PaymentApi SecretFill Maximum/3600 1/1 >= 80 ignore'],
  ['KeyShardsUnreadable', 'PaymentApi KeyShardsUnreadable Maximum/3600 1/1 >= 1 ignore'],
];

/** The two metrics only a stack with per-app rate limits can emit. */
const RATE_LIMIT_METRICS: readonly string[] = [METRIC.throttled, METRIC.rateLimiterUnavailable];

/** `"<namespace>","<name>","Service","Test"`: a custom metric as the dashboard body holds it. */
function dashboardMetric(name: string, namespace = 'PaymentApi'): string {
  return JSON.stringify([namespace, name, 'Service', 'Test']).slice(1, -1);
}

/** Rows of the Markdown table in `section` of the operations page whose first column is a code span. */
function operationsTable(section: string): string[][] {
  const page = readFileSync(path.join(PROJECT_ROOT, 'docs', 'operations.md'), 'utf8');
  const body = page.split(`\n## ${section}\n`)[1]?.split('\n## ')[0] ?? '';
  return body
    .split('\n')
    .filter((line) => /^\| `/.test(line))
    .map((line) =>
      line
        .split('|')
        .slice(1, -1)
        .map((cell) => cell.trim()),
    );
}

describe("the operations page's metrics table", () => {
  it('lists every metric the payment Lambda counts and the monitor measures, and the unit of each level', () => {
    const rows = operationsTable('Metrics');
    const documented = rows.map(([metric = '']) => metric.replaceAll('`', ''));
    const monitorUnits = Object.fromEntries(
      rows
        .filter(([metric = '']) => metric.replaceAll('`', '') in REGISTRY_METRIC_UNITS)
        .map(([metric = '', meaning = '']) => [metric.replaceAll('`', ''), /unit (\w+)/.exec(meaning)?.[1]]),
    );

    expect(documented.sort()).toEqual(
      [...Object.values(METRIC), ...Object.keys(REGISTRY_METRIC_UNITS)].sort(),
    );
    expect(monitorUnits).toEqual(REGISTRY_METRIC_UNITS);
  });
});

/** Each saved query and the dashboard's log widget: the function whose log group it reads, and its text. */
function logQueries(template: Template): { name: string; reads: 'payment' | 'monitor'; text: string }[] {
  const handlerLogs = [{ Ref: onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /HandlerLogs/) }];
  const monitorLogs = [
    { Ref: onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /KeyRegistryMonitorFunctionLogs/) },
  ];
  const readsOf = (logGroups: unknown): 'payment' | 'monitor' => {
    if (JSON.stringify(logGroups) === JSON.stringify(handlerLogs)) return 'payment';
    expect(logGroups).toEqual(monitorLogs);
    return 'monitor';
  };
  const queries = Object.values(resourcesOf(template, 'AWS::Logs::QueryDefinition')).map((query) => ({
    name: String(query.Properties.Name),
    reads: readsOf(query.Properties.LogGroupNames),
    text: String(query.Properties.QueryString),
  }));
  const widget = /"query":"SOURCE '([^']*)' \| (.*?[^\\])"/.exec(dashboardBody(template));
  return [
    ...queries,
    {
      name: 'dashboard log widget',
      reads: readsOf([JSON.parse(widget?.[1] ?? 'null')]),
      text: (widget?.[2] ?? '').replaceAll('\\"', '"').replaceAll('\\n', '\n'),
    },
  ];
}

/** The source a function is bundled from, where its log lines' messages and fields are written. */
function sourceOf(fn: 'payment' | 'monitor'): string {
  const folders = [fn === 'payment' ? 'lambda/payment' : 'lambda/registry-monitor', 'shared'];
  return folders
    .flatMap((folder) =>
      readdirSync(path.join(PROJECT_ROOT, folder), { recursive: true, encoding: 'utf8' })
        .filter((name) => name.endsWith('.ts'))
        .map((name) => readFileSync(path.join(PROJECT_ROOT, folder, name), 'utf8')),
    )
    .join('\n');
}

/**
 * What a query needs of the lines it reads: the messages and values it filters on (`message = "keys loaded"`), and
 * the fields it filters, aggregates and groups by.
 */
function queryNeeds(text: string): { literals: string[]; fields: string[] } {
  const literals = [...text.matchAll(/= "([^"]+)"/g)].map((match) => match[1] ?? '');
  const filtered = [...text.matchAll(/(\w+) = /g)].map((match) => match[1] ?? '');
  const aggregated = [...text.matchAll(/\w+\((\w+)\)/g)].map((match) => match[1] ?? '');
  const grouped = [...text.matchAll(/ by ([^\n|]+)/g)].flatMap((match) =>
    (match[1] ?? '').split(',').map((field) => field.trim()),
  );
  const fields = [...filtered, ...aggregated, ...grouped].filter((field) => !/^bin\(|^\d/.test(field));
  return { literals, fields: [...new Set(fields)] };
}

describe('PaymentApi monitoring with default props', () => {
  let template: Template;
  let handlerId: string;
  let stageId: string;

  beforeAll(() => {
    template = sharedTemplate();
    handlerId = functionLogicalId(template, 'handler');
    stageId = onlyLogicalId(template, 'AWS::ApiGateway::Stage');
  });

  describe('alarms', () => {
    it('watch each its metric with its statistic, period, datapoints and threshold', () => {
      const alarms = alarmsByName(template);

      expect(DEFAULT_ALARMS.map(([name]) => [name, alarmShape(alarms[`Test-${name}`])])).toEqual(
        DEFAULT_ALARMS,
      );
    });

    it('watch the API stage, the payment Lambda and the service by their own dimensions', () => {
      const alarms = alarmsByName(template);
      const dimensionsOf = (namespace: string): unknown[] =>
        Object.values(alarms)
          .filter((alarm) => alarm.Namespace === namespace)
          .map((alarm) => alarm.Dimensions);

      expect(dimensionsOf('AWS/ApiGateway')).toEqual(
        Array(2).fill([
          { Name: 'ApiName', Value: 'Test' },
          { Name: 'Stage', Value: { Ref: stageId } },
        ]),
      );
      expect(dimensionsOf('AWS/Lambda')).toEqual(
        Array(2).fill([{ Name: 'FunctionName', Value: { Ref: handlerId } }]),
      );
      expect(dimensionsOf(CUSTOM.namespace)).toEqual(Array(6).fill(CUSTOM.dimensions));
    });

    it('count as KeyMonitorFailing the monitor’s failed runs plus the runs its schedule could not deliver, each hour', () => {
      expect(alarmsByName(template)['Test-KeyMonitorFailing']).toMatchObject({
        Metrics: [
          expect.objectContaining({ Id: 'expr_1', Expression: 'FILL(errors, 0) + FILL(undelivered, 0)' }),
          expect.objectContaining({
            Id: 'errors',
            MetricStat: expect.objectContaining({
              Metric: expect.objectContaining({ Namespace: 'AWS/Lambda', MetricName: 'Errors' }) as unknown,
              Period: 3600,
              Stat: 'Sum',
            }) as unknown,
          }),
          expect.objectContaining({
            Id: 'undelivered',
            MetricStat: expect.objectContaining({
              Metric: expect.objectContaining({
                Namespace: 'AWS/Events',
                MetricName: 'FailedInvocations',
              }) as unknown,
              Period: 3600,
              Stat: 'Sum',
            }) as unknown,
          }),
        ],
        EvaluationPeriods: 1,
        DatapointsToAlarm: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        TreatMissingData: 'notBreaching',
      });
    });

    it("are the operations page's table, each with its period and statistic", () => {
      const alarms = alarmsByName(template);
      const periodText: Record<string, string> = { '60': '1 min', '300': '5 min', '3600': '1 hour' };
      const documented = operationsTable('Alarms')
        .map(([alarm = '', metric = '', period = '']) => [alarm.replaceAll('`', ''), metric, period])
        .filter(([alarm = '']) => alarms[`Test-${alarm}`]?.MetricName !== undefined);

      expect(documented).toEqual(
        documented.map(([alarm = '', metric = '']) => {
          const synthesized = alarms[`Test-${alarm}`] ?? {};
          const statistic = String(synthesized.Statistic ?? synthesized.ExtendedStatistic);
          return [
            alarm,
            metric.includes(`\`${String(synthesized.MetricName)}\``) && metric.includes(`(${statistic}`)
              ? metric
              : `names \`${String(synthesized.MetricName)}\` (${statistic})`,
            periodText[String(synthesized.Period)],
          ];
        }),
      );
      expect(documented).toHaveLength(DEFAULT_ALARMS.length);
    });

    // No topic or key is created: payment-api-stack 'keep their logical IDs with the defaults'.
    it('have no actions when neither alarmEmail nor alarmTopic is given', () => {
      template.allResourcesProperties('AWS::CloudWatch::Alarm', {
        AlarmActions: Match.absent(),
        OKActions: Match.absent(),
      });
    });
  });

  describe('dashboard', () => {
    it('is named after the stack and the Region, since dashboards are global to the account, and points to the runbook', () => {
      template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
        DashboardName: { 'Fn::Join': ['', ['Test-', { Ref: 'AWS::Region' }]] },
      });
      expect(dashboardBody(template)).toContain('Runbook: docs/operations.md.');
    });

    it('shows every custom metric of the service but the two of per-app limits, which it cannot emit', () => {
      const body = dashboardBody(template);

      for (const name of Object.values(METRIC)) {
        const shown = body.includes(dashboardMetric(name));
        expect({ name, shown }).toEqual({ name, shown: !RATE_LIMIT_METRICS.includes(name) });
      }
    });

    it('graphs the monitor’s hourly levels at their highest, with the fill alarm’s threshold drawn', () => {
      const body = dashboardBody(template);

      for (const name of Object.keys(REGISTRY_METRIC_UNITS)) {
        expect(body).toMatch(
          new RegExp(`\\[${dashboardMetric(name)},\\{"label":"${name}[^"]*","period":3600,"stat":"Maximum"`),
        );
      }
      expect(body).toContain('"horizontal":[{"value":80,"label":"SecretNearlyFull","yAxis":"right"}]');
    });

    it('graphs the monitor’s runs, failed runs and runs its schedule did not deliver', () => {
      const body = dashboardBody(template);
      const monitorId = functionLogicalId(template, 'monitor');
      const ruleId = onlyLogicalId(template, 'AWS::Events::Rule');

      for (const metric of ['Invocations', 'Errors']) {
        expect(body).toContain(
          `"AWS/Lambda","${metric}","FunctionName","${JSON.stringify({ Ref: monitorId })}"`,
        );
      }
      expect(body).toContain(
        `"AWS/Events","FailedInvocations","RuleName","${JSON.stringify({ Ref: ruleId })}"`,
      );
    });
  });

  describe('saved queries and the dashboard’s log widget', () => {
    // Five: the reads of each (the dashboard's widget the sixth) in 'each read a log group ... with default props'.
    it('are named after the stack', () => {
      const names = Object.values(resourcesOf(template, 'AWS::Logs::QueryDefinition')).map(
        (query) => query.Properties.Name,
      );

      expect(names).toEqual(names.map(() => expect.stringMatching(/^Test\//) as unknown));
    });

    // With per-app rate limits, the sixth query too: 'saves a sixth query, "429s by app"'.
    it.each<[string, PaymentApiProps, number]>([
      ['default props', {}, 4],
      ['per-app rate limits', RATE_LIMITED, 5],
    ])(
      'each read a log group whose function writes every message they filter on and every field they use, with %s',
      (_case, props, paymentReaders) => {
        const sources = { payment: sourceOf('payment'), monitor: sourceOf('monitor') };
        const queries = logQueries(sharedTemplate(props));

        const missing = queries.flatMap(({ name, reads, text }) => {
          const { literals, fields } = queryNeeds(text);
          const known = (field: string): boolean =>
            reads === 'payment' ? field in LOG_FIELDS : new RegExp(`\\b${field}\\b`).test(sources.monitor);
          return [
            ...literals.filter((literal) => !sources[reads].includes(`'${literal}'`)),
            ...fields.filter((field) => !known(field)),
          ].map((need) => `${name}: ${need}`);
        });

        expect(queries.map(({ reads }) => reads).sort()).toEqual([
          'monitor',
          'monitor',
          ...Array<string>(paymentReaders).fill('payment'),
        ]);
        expect(missing).toEqual([]);
      },
    );
  });

  describe('tracing, off by default', () => {
    it('leaves the function and the stage untraced, with no X-Ray permission', () => {
      template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: Match.absent() });
      template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: Match.absent() });
      expect(JSON.stringify(policyStatements(template))).not.toContain('xray:');
    });
  });
});

describe('the dashboard', () => {
  it.each<[string, PaymentApiProps]>([
    ['default props', {}],
    ['per-app rate limits', RATE_LIMITED],
    ['scheduled rotation', ROTATING],
  ])('shows the state of every alarm, with %s', (_case, props) => {
    const template = sharedTemplate(props);
    const body = dashboardBody(template);

    for (const alarmId of Object.keys(resourcesOf(template, 'AWS::CloudWatch::Alarm'))) {
      expect(body).toContain(JSON.stringify({ 'Fn::GetAtt': [alarmId, 'Arn'] }));
    }
  });
});

describe('PaymentApi monitoring with per-app rate limits', () => {
  let template: Template;

  beforeAll(() => {
    template = sharedTemplate(RATE_LIMITED);
  });

  // That it notifies the topic like every other alarm: 'sends every alarm and every recovery to that topic'.
  it('alarms as RateLimiterUnavailable on any request the limiter could not count', () => {
    const alarm = alarmsByName(template)['Test-RateLimiterUnavailable'];

    expect(alarmShape(alarm)).toBe('PaymentApi RateLimiterUnavailable Sum/60 1/5 >= 1 notBreaching');
    expect(alarm?.Dimensions).toEqual(CUSTOM.dimensions);
  });

  it.each<[string, NonNullable<PaymentApiProps['appRateLimit']>]>([
    ['local (the default)', { perSecond: 20 }],
    ['open', { perSecond: 20, failure: 'open' }],
    ['closed', { perSecond: 20, failure: 'closed' }],
  ])('names the failure mode in the RateLimiterUnavailable alarm when failing %s', (_case, appRateLimit) => {
    expect(alarmsByName(sharedTemplate({ appRateLimit }))['Test-RateLimiterUnavailable']).toMatchObject({
      AlarmDescription: expect.stringContaining(
        `appRateLimitFailure=${appRateLimit.failure ?? 'local'} (this stack)`,
      ) as unknown,
    });
  });

  it('says in KeysUnavailable that a 503 can come from the limiter only when it fails closed', () => {
    const keysUnavailable = (props: PaymentApiProps): unknown =>
      alarmsByName(sharedTemplate(props))['Test-KeysUnavailable']?.AlarmDescription;

    expect(keysUnavailable({ appRateLimit: { perSecond: 20 } })).toBe(keysUnavailable({}));
    expect(keysUnavailable({ appRateLimit: { perSecond: 20, failure: 'open' } })).toBe(keysUnavailable({}));
    expect(keysUnavailable({ appRateLimit: { perSecond: 20, failure: 'closed' } })).toContain(
      'With appRateLimitFailure=closed a 503 can also come from the rate limiter',
    );
  });

  describe('dashboard', () => {
    it('graphs the 429s and the requests the limiter could not count, per minute', () => {
      const body = dashboardBody(template);
      const widget = body.slice(body.indexOf('"title":"Per-app rate limits'));

      expect(widget).toMatch(/^"title":"Per-app rate limits: 429s and limiter unavailable \(per minute\)"/);
      for (const name of RATE_LIMIT_METRICS) {
        expect(widget).toContain(`[${dashboardMetric(name)},{"label":"${name}","period":60,"stat":"Sum"}]`);
      }
    });
  });

  // That it needs only what the Lambda writes: 'each read a log group whose function writes every message ...'.
  it('saves a sixth query, "429s by app", over the Lambda log group', () => {
    const throttled = logQueries(template).find(({ name }) => name === 'Test/429s by app');

    expect(throttled?.reads).toBe('payment');
    expect(throttled?.text).toContain('status = 429');
  });
});

describe('PaymentApi monitoring with alarmEmail', () => {
  let template: Template;
  let topicId: string;
  let keyId: string;

  beforeAll(() => {
    template = sharedTemplate({ monitoring: { alarmEmail: 'oncall@example.com' } });
    topicId = onlyLogicalId(template, 'AWS::SNS::Topic');
    keyId = onlyLogicalId(template, 'AWS::KMS::Key');
  });

  it('subscribes the address by email to a topic of its own', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 1);
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'email',
      Endpoint: 'oncall@example.com',
      TopicArn: { Ref: topicId },
    });
  });

  it.each<[string, PaymentApiProps]>([
    ['alone', { monitoring: { alarmEmail: 'oncall@example.com' } }],
    ['with per-app rate limits, whose RateLimiterUnavailable alarm it adds', RATE_LIMITED],
    ['with scheduled rotation, whose RotationFailing alarm it adds', ROTATING],
  ])('sends every alarm and every recovery to that topic, %s', (_case, props) => {
    const withTopic = sharedTemplate(props);
    const topic = { Ref: onlyLogicalId(withTopic, 'AWS::SNS::Topic') };

    withTopic.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [topic],
      OKActions: [topic],
      InsufficientDataActions: Match.absent(),
    });
  });

  it('encrypts the topic with a rotated customer key that CloudWatch may use to publish', () => {
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          }),
        ]),
      },
    });
  });

  it('deletes the key with the stack after 7 days: it only protects notices in flight', () => {
    template.hasResource('AWS::KMS::Key', {
      DeletionPolicy: 'Delete',
      Properties: Match.objectLike({ PendingWindowInDays: 7 }),
    });
  });

  it('lets CloudWatch alarms of this account and Region publish, over TLS only', () => {
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      Topics: [{ Ref: topicId }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Action: 'sns:Publish',
            Principal: '*',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sns:Publish',
            Principal: { Service: 'cloudwatch.amazonaws.com' },
            Resource: { Ref: topicId },
            Condition: {
              ArnLike: {
                'aws:SourceArn': {
                  'Fn::Join': [
                    '',
                    [
                      'arn:',
                      { Ref: 'AWS::Partition' },
                      ':cloudwatch:',
                      { Ref: 'AWS::Region' },
                      ':',
                      { Ref: 'AWS::AccountId' },
                      ':alarm:*',
                    ],
                  ],
                },
              },
            },
          }),
        ]),
      },
    });
  });
});

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:123456789012:oncall';

/**
 * The template with an existing topic, given as the option each key names (alarmTopic on the construct, alarmTopicArn
 * on the stack), beside other monitoring options.
 */
const WITH_EXISTING_TOPIC: Record<'alarmTopic' | 'alarmTopicArn', (others?: MonitoringOptions) => Template> =
  {
    alarmTopic: (others) =>
      synthesize(
        {},
        {
          extra: (stack) => ({
            monitoring: { ...others, alarmTopic: sns.Topic.fromTopicArn(stack, 'Oncall', TOPIC_ARN) },
          }),
        },
      ).template,
    alarmTopicArn: (others) =>
      synthesizeStack('PaymentApi', { monitoring: { ...others, alarmTopicArn: TOPIC_ARN } }),
  };

describe('PaymentApi monitoring with an existing topic', () => {
  it.each(Object.entries(WITH_EXISTING_TOPIC))(
    'sends every alarm and recovery to it, given as %s, and creates no topic',
    (_option, build) => {
      // Act
      const template = build();

      // Assert
      template.resourceCountIs('AWS::SNS::Topic', 0);
      template.resourceCountIs('AWS::SNS::TopicPolicy', 0);
      template.resourceCountIs('AWS::KMS::Key', 0);
      template.resourceCountIs('AWS::CloudWatch::Alarm', 11);
      template.allResourcesProperties('AWS::CloudWatch::Alarm', {
        AlarmActions: [TOPIC_ARN],
        OKActions: [TOPIC_ARN],
      });
    },
  );
});

describe('PaymentApi monitoring with tuned options', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize({
      monitoring: {
        metricsNamespace: 'Payments/Staging',
        unauthorizedAlarmThreshold: 25,
        latencyAlarmThreshold: Duration.millis(2500),
        serverErrorRateAlarmThreshold: 5,
      },
    }));
  });

  it('alarms at the given thresholds and says so in the descriptions', () => {
    const alarms = alarmsByName(template);

    expect(alarms['Test-UnauthorizedRequests']).toMatchObject({ Threshold: 25 });
    expect(alarms['Test-UnauthorizedRequests']?.AlarmDescription).toContain(
      'At least 25 requests in 5 minutes',
    );
    expect(alarms['Test-ApiLatencyP99']).toMatchObject({ Threshold: 2500 });
    expect(alarms['Test-ApiLatencyP99']?.AlarmDescription).toContain('more than 2500 ms');
    expect(alarms['Test-ApiServerErrors']).toMatchObject({ Threshold: 0.05 });
    expect(alarms['Test-ApiServerErrors']?.AlarmDescription).toContain('More than 5% of requests');
  });

  it('reads and tells the Lambda the given namespace', () => {
    const custom = Object.values(alarmsByName(template)).filter(
      (alarm) => alarm.MetricName !== undefined && !String(alarm.Namespace).startsWith('AWS/'),
    );

    // The six alarms on the service's own metrics (default props), all under the given namespace.
    expect(custom.map((alarm) => alarm.Namespace)).toEqual(Array(6).fill('Payments/Staging'));
    expect(dashboardBody(template)).toContain('["Payments/Staging","Accepted","Service","Test"');
    expect(dashboardBody(template)).toContain('["Payments/Staging","SecretFill","Service","Test"');
    expect(
      Object.keys(
        template.findResources('AWS::Lambda::Function', {
          Properties: {
            Environment: { Variables: Match.objectLike({ METRICS_NAMESPACE: 'Payments/Staging' }) },
          },
        }),
      ).sort(),
    ).toEqual([functionLogicalId(template, 'handler'), functionLogicalId(template, 'monitor')].sort());
  });
});

describe('PaymentApi with tracing', () => {
  let template: Template;

  beforeAll(() => {
    ({ template } = synthesize({ tracing: true }));
  });

  it('traces the Lambda actively and the stage', () => {
    template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: { Mode: 'Active' } });
    template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: true });
  });

  it('lets the Lambda send traces, on "*" as X-Ray requires, and acknowledges that on its policy only', () => {
    const policies = resourcesOf(template, 'AWS::IAM::Policy');
    const handlerPolicy = Object.entries(policies).find(([id]) => id.startsWith('PaymentApiHandlerRole'));
    const acknowledged = handlerPolicy?.[1].Metadata?.cdk_nag?.rules_to_suppress ?? [];

    expect(functionRoleStatements(template, functionLogicalId(template, 'handler'))).toContainEqual({
      Effect: 'Allow',
      Action: ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'],
      Resource: '*',
    });
    expect(acknowledged.map(({ id, applies_to }) => ({ id, applies_to }))).toEqual([
      { id: 'AwsSolutions-IAM5', applies_to: ['Resource::*'] },
    ]);
    // The monitor is not traced: nothing of X-Ray in its policy.
    expect(
      JSON.stringify(functionRoleStatements(template, functionLogicalId(template, 'monitor'))),
    ).not.toContain('xray:');
  });
});

describe('PaymentApi monitoring props', () => {
  const NAMESPACE =
    'monitoring.metricsNamespace must be 1 to 255 letters, digits or . _ - / # : and not start with "AWS/"';
  const UNAUTHORIZED =
    'monitoring.unauthorizedAlarmThreshold must be a whole number of 401 answers in 5 minutes from 1 to 1000000';
  const LATENCY = 'monitoring.latencyAlarmThreshold must be a whole number of milliseconds from 1 to 29000';
  const ERROR_RATE =
    'monitoring.serverErrorRateAlarmThreshold must be a percentage greater than 0 and less than 100';
  const EMAIL = 'monitoring.alarmEmail must be one email address (name@example.com)';

  it.each<[string, MonitoringOptions, string]>([
    ['a namespace with a space', { metricsNamespace: 'Payment Api' }, `${NAMESPACE}, got "Payment Api"`],
    [
      'a namespace reserved for AWS',
      { metricsNamespace: 'AWS/Payments' },
      `${NAMESPACE}, got "AWS/Payments"`,
    ],
    ['an empty namespace', { metricsNamespace: '' }, `${NAMESPACE}, got ""`],
    ['a zero unauthorized threshold', { unauthorizedAlarmThreshold: 0 }, `${UNAUTHORIZED}, got 0`],
    [
      'a latency threshold beyond the integration time-out',
      { latencyAlarmThreshold: Duration.seconds(30) },
      `${LATENCY}, got 30000`,
    ],
    ['a zero latency threshold', { latencyAlarmThreshold: Duration.millis(0) }, `${LATENCY}, got 0`],
    ['a zero error rate', { serverErrorRateAlarmThreshold: 0 }, `${ERROR_RATE}, got 0`],
    ['an error rate of 100%', { serverErrorRateAlarmThreshold: 100 }, `${ERROR_RATE}, got 100`],
    ['an address without a domain', { alarmEmail: 'oncall' }, `${EMAIL}, got "oncall"`],
    [
      'two addresses',
      { alarmEmail: 'a@example.com, b@example.com' },
      `${EMAIL}, got "a@example.com, b@example.com"`,
    ],
  ])('refuses %s', (_case, monitoring, message) => {
    expect(() => {
      constructUnbundled({ monitoring });
    }).toThrow(message);
  });

  it.each(Object.entries(WITH_EXISTING_TOPIC))('refuses alarmEmail and %s together', (option, build) => {
    expect(() => build({ alarmEmail: 'oncall@example.com' })).toThrow(
      `Give monitoring.alarmEmail or monitoring.${option}, not both: subscribe the address to your topic to get notices from both`,
    );
  });

  it.each([
    'arn:aws:sns:eu-west-1:123456789012:oncall.fifo',
    'arn:aws:sqs:eu-west-1:123456789012:oncall',
    'oncall',
  ])('refuses alarmTopicArn "%s" on the stack', (topicArn) => {
    expect(() => synthesizeStack('PaymentApi', { monitoring: { alarmTopicArn: topicArn } })).toThrow(
      `monitoring.alarmTopicArn must be a standard SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), got "${topicArn}"`,
    );
  });
});

describe('PaymentApi monitoring with scheduled rotation', () => {
  let template: Template;
  let rotationFunctionId: string;

  beforeAll(() => {
    template = sharedTemplate(ROTATING);
    rotationFunctionId = functionLogicalId(template, 'rotation');
  });

  // That it notifies the topic of it and of the recovery: 'sends every alarm and every recovery to that topic'.
  it('alarms when any step of the rotation function fails', () => {
    const alarm = alarmsByName(template)['Test-RotationFailing'];

    expect(alarmShape(alarm)).toBe('AWS/Lambda Errors Sum/60 1/5 >= 1 notBreaching');
    expect(alarm?.Dimensions).toEqual([{ Name: 'FunctionName', Value: { Ref: rotationFunctionId } }]);
  });

  // Its alarm's state on the dashboard: 'the dashboard shows the state of every alarm, with scheduled rotation'.
  it("shows the rotation function's runs and failures on the dashboard", () => {
    const body = dashboardBody(template);

    for (const metric of ['Invocations', 'Errors']) {
      expect(body).toContain(
        `"AWS/Lambda","${metric}","FunctionName","${JSON.stringify({ Ref: rotationFunctionId })}"`,
      );
    }
  });
});

describe('alarm descriptions', () => {
  it("fit CloudWatch's 1024 characters in the configurations that make them longest", () => {
    const longest = synthesize({
      rotation: { every: Duration.days(30) },
      appRateLimit: { perSecond: 20, failure: 'closed' },
      keyExpiryWarning: Duration.days(365),
      monitoring: { unauthorizedAlarmThreshold: 1_000_000, latencyAlarmThreshold: Duration.millis(29_000) },
    }).template;

    const tooLong = Object.entries(alarmsByName(longest))
      .map(([name, alarm]) => ({ name, length: String(alarm.AlarmDescription).length }))
      .filter(({ length }) => length > 1024);

    expect(Object.keys(alarmsByName(longest))).toHaveLength(13);
    expect(tooLong).toEqual([]);
  });
});
