import { Duration } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { METRIC, METRICS_ENV, OUTCOME_METRICS } from '../../../lambda/payment/metric-names';
import { REGISTRY_METRIC_UNITS } from '../../../lambda/registry-monitor/metric-names';
import type { MonitoringOptions } from '../../../lib/monitoring';
import { PaymentApiStack } from '../../../lib/payment-api-stack';
import {
  constructUnbundled,
  functionLogicalId,
  functionRoleStatements,
  onlyLogicalId,
  policyStatements,
  synthesize,
  synthesizeStack,
  unbundledApp,
} from '../../support/construct-template';

interface Resource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly Metadata?: {
    cdk_nag?: { rules_to_suppress: { id: string; reason: string; applies_to?: unknown[] }[] };
  };
}

function resources(template: Template, type: string): Record<string, Resource> {
  return template.findResources(type) as Record<string, Resource>;
}

/** Every alarm of the template by its name. */
function alarmsByName(template: Template): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    Object.values(resources(template, 'AWS::CloudWatch::Alarm')).map((alarm) => [
      String(alarm.Properties.AlarmName),
      alarm.Properties,
    ]),
  );
}

/** The dashboard body as one string, tokens (alarm ARNs, the Region) rendered as their JSON. */
function dashboardBody(template: Template): string {
  const [dashboard] = Object.values(resources(template, 'AWS::CloudWatch::Dashboard'));
  const body = dashboard?.Properties.DashboardBody as { 'Fn::Join': [string, unknown[]] };
  return body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join('');
}

const CUSTOM = { namespace: 'PaymentApi', dimensions: [{ Name: 'Service', Value: 'Test' }] };

/** What each alarm watches and how, in the construct synthesized in stack "Test" with default props. */
const DEFAULT_ALARMS: [string, Record<string, unknown>][] = [
  [
    'Test-ApiServerErrors',
    {
      Namespace: 'AWS/ApiGateway',
      MetricName: '5XXError',
      Statistic: 'Average',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0.01,
    },
  ],
  [
    'Test-ApiLatencyP99',
    {
      Namespace: 'AWS/ApiGateway',
      MetricName: 'Latency',
      ExtendedStatistic: 'p99',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 5,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 1000,
    },
  ],
  [
    'Test-LambdaErrors',
    {
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    },
  ],
  [
    'Test-LambdaThrottles',
    {
      Namespace: 'AWS/Lambda',
      MetricName: 'Throttles',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    },
  ],
  [
    'Test-KeysUnavailable',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'Unavailable',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    },
  ],
  [
    'Test-KeyRefreshFailing',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'KeyRefreshFailed',
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 3,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
    },
  ],
  [
    'Test-UnauthorizedRequests',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'Unauthorized',
      Statistic: 'Sum',
      Period: 300,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 100,
    },
  ],
  [
    'Test-KeysExpiringSoon',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'KeysExpiringSoon',
      Statistic: 'Maximum',
      Period: 3600,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanThreshold',
      Threshold: 0,
      // Measured once an hour by the monitor: an hour without a measurement neither raises nor clears it.
      TreatMissingData: 'ignore',
    },
  ],
  [
    'Test-SecretNearlyFull',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'SecretFill',
      Statistic: 'Maximum',
      Period: 3600,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 80,
      TreatMissingData: 'ignore',
    },
  ],
  [
    'Test-KeyShardsUnreadable',
    {
      Namespace: CUSTOM.namespace,
      Dimensions: CUSTOM.dimensions,
      MetricName: 'KeyShardsUnreadable',
      Statistic: 'Maximum',
      Period: 3600,
      EvaluationPeriods: 1,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      TreatMissingData: 'ignore',
    },
  ],
  [
    'Test-KeyMonitorFailing',
    {
      // The monitor's failed runs plus the runs its schedule could not deliver, each hour: a failure either way.
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
    },
  ],
];

describe('the metric names shared with the Lambda', () => {
  it('are the fifteen counts of the payment Lambda, the eight outcomes among them, and the monitor’s three levels', () => {
    expect(Object.values(METRIC).sort()).toEqual(
      [
        'Accepted',
        'BadRequest',
        'ColdStart',
        'ExpiredKey',
        'InternalError',
        'KeyRefreshFailed',
        'KeyRefreshSucceeded',
        'PayloadTooLarge',
        'RateLimiterUnavailable',
        'SourceNotAllowed',
        'StaleKeysServed',
        'Throttled',
        'Unauthorized',
        'Unavailable',
        'UnsupportedMediaType',
      ].sort(),
    );
    expect(REGISTRY_METRIC_UNITS).toEqual({
      KeysExpiringSoon: 'Count',
      KeyShardsUnreadable: 'Count',
      SecretFill: 'Percent',
    });
    expect([...OUTCOME_METRICS].sort()).toEqual(
      [
        'Accepted',
        'BadRequest',
        'InternalError',
        'PayloadTooLarge',
        'Throttled',
        'Unauthorized',
        'Unavailable',
        'UnsupportedMediaType',
      ].sort(),
    );
    expect(METRICS_ENV).toEqual({
      namespace: 'METRICS_NAMESPACE',
      serviceName: 'SERVICE_NAME',
    });
  });
});

/** The two metrics only a stack with per-app rate limits can emit. */
const RATE_LIMIT_METRICS: readonly string[] = [METRIC.throttled, METRIC.rateLimiterUnavailable];

/** `"<namespace>","<name>","Service","Test"`: a custom metric as the dashboard body holds it. */
function dashboardMetric(name: string, namespace = 'PaymentApi'): string {
  return JSON.stringify([namespace, name, 'Service', 'Test']).slice(1, -1);
}

describe('PaymentApi monitoring with default props', () => {
  let template: Template;
  let handlerId: string;
  let stageId: string;

  beforeAll(() => {
    ({ template } = synthesize());
    handlerId = functionLogicalId(template, 'handler');
    stageId = onlyLogicalId(template, 'AWS::ApiGateway::Stage');
  });

  describe('alarms', () => {
    it('are the eleven of the runbook, each named after the stack', () => {
      expect(Object.keys(alarmsByName(template)).sort()).toEqual(DEFAULT_ALARMS.map(([name]) => name).sort());
    });

    it.each(DEFAULT_ALARMS)(
      '%s watches its metric with its statistic, period and threshold',
      (name, expected) => {
        const alarm = alarmsByName(template)[name];

        expect(alarm).toMatchObject({ TreatMissingData: 'notBreaching', ...expected });
      },
    );

    it('watch the API stage and the payment Lambda by their own dimensions', () => {
      const alarms = alarmsByName(template);
      const stageDimensions = [
        { Name: 'ApiName', Value: 'Test' },
        { Name: 'Stage', Value: { Ref: stageId } },
      ];
      const functionDimensions = [{ Name: 'FunctionName', Value: { Ref: handlerId } }];

      expect(alarms['Test-ApiServerErrors']?.Dimensions).toEqual(stageDimensions);
      expect(alarms['Test-ApiLatencyP99']?.Dimensions).toEqual(stageDimensions);
      expect(alarms['Test-LambdaErrors']?.Dimensions).toEqual(functionDimensions);
      expect(alarms['Test-LambdaThrottles']?.Dimensions).toEqual(functionDimensions);
    });

    it('say what they mean and end with the runbook section named after them, within CloudWatch’s 1024 characters', () => {
      const alarms = Object.entries(alarmsByName(template));

      expect(alarms).toHaveLength(11);
      for (const [name, alarm] of alarms) {
        const section = name.replace(/^Test-/, '').toLowerCase();
        const description = String(alarm.AlarmDescription);

        expect({ name, description }).toEqual({
          name,
          description: expect.stringMatching(
            new RegExp(`\\. Runbook: docs/operations\\.md#${section}$`),
          ) as unknown,
        });
        expect(description.length).toBeLessThanOrEqual(1024);
      }
    });

    it('warn of keys expiring within the 14 days the Lambda counts, and say how to find and replace them', () => {
      const description = String(alarmsByName(template)['Test-KeysExpiringSoon']?.AlarmDescription);

      for (const fragment of [
        'every key of at least one app expires within 14 days',
        'expired_key',
        'a rotation in progress',
        'npm run keys -- list',
        'rotate <app-id> --grace <duration>',
        'expire <app-id> <key-id> --never',
      ]) {
        expect(description).toContain(fragment);
      }
    });

    it('warn of a secret 80% full before any writer is refused, and say how to make room', () => {
      const description = String(alarmsByName(template)['Test-SecretNearlyFull']?.AlarmDescription);

      for (const fragment of [
        '80%',
        '65,536 bytes',
        'npm run keys -- prune',
        'fewer keys per app',
        'sha256:',
      ]) {
        expect(description).toContain(fragment);
      }
    });

    it('have no actions and no topic is created when neither alarmEmail nor alarmTopic is given', () => {
      template.resourceCountIs('AWS::SNS::Topic', 0);
      template.resourceCountIs('AWS::KMS::Key', 0);
      template.allResourcesProperties('AWS::CloudWatch::Alarm', {
        AlarmActions: Match.absent(),
        OKActions: Match.absent(),
      });
    });
  });

  describe('dashboard', () => {
    it('points to the runbook page', () => {
      expect(dashboardBody(template)).toContain('Runbook: docs/operations.md.');
    });

    it('is named after the stack and the Region, since dashboards are global to the account', () => {
      template.hasResourceProperties('AWS::CloudWatch::Dashboard', {
        DashboardName: { 'Fn::Join': ['', ['Test-', { Ref: 'AWS::Region' }]] },
      });
    });

    it('shows every custom metric of the service but the two of per-app limits, which it cannot emit', () => {
      const body = dashboardBody(template);

      for (const name of Object.values(METRIC)) {
        const shown = body.includes(dashboardMetric(name));
        expect({ name, shown }).toEqual({ name, shown: !RATE_LIMIT_METRICS.includes(name) });
      }
    });

    it('shows the API stage and the Lambda metrics the runbook refers to', () => {
      const body = dashboardBody(template);

      for (const metric of ['Count', '4XXError', '5XXError', 'Latency', 'IntegrationLatency']) {
        expect(body).toContain(`"AWS/ApiGateway","${metric}","ApiName","Test","Stage"`);
      }
      for (const metric of ['Duration', 'ConcurrentExecutions', 'Throttles', 'Errors']) {
        expect(body).toContain(`"AWS/Lambda","${metric}","FunctionName"`);
      }
      expect(body).toContain('"stat":"p50"');
      expect(body).toContain('"stat":"p99"');
    });

    it('graphs the refusals of expired keys and of networks not allowed, per minute', () => {
      const body = dashboardBody(template);

      for (const name of ['ExpiredKey', 'SourceNotAllowed']) {
        expect(body).toContain(
          `["PaymentApi","${name}","Service","Test",{"label":"${name}","period":60,"stat":"Sum"}]`,
        );
      }
    });

    it('graphs the monitor’s hourly levels at their highest: keys expiring soon, unreadable shards and the fullest shard’s fill, with the fill alarm’s threshold drawn', () => {
      const body = dashboardBody(template);

      expect(body).toContain(
        '["PaymentApi","KeysExpiringSoon","Service","Test",{"label":"KeysExpiringSoon","period":3600,"stat":"Maximum"}]',
      );
      expect(body).toContain(
        '["PaymentApi","KeyShardsUnreadable","Service","Test",{"label":"KeyShardsUnreadable","period":3600,"stat":"Maximum"}]',
      );
      expect(body).toContain(
        '["PaymentApi","SecretFill","Service","Test",{"label":"SecretFill, fullest shard (%)","period":3600,"stat":"Maximum","yAxis":"right"}]',
      );
      expect(body).toContain('"horizontal":[{"value":80,"label":"SecretNearlyFull","yAxis":"right"}]');
      expect(body).toContain('"right":{"min":0,"max":100}');
    });

    it('lists the fullest shards by number from the monitor’s log group, at their latest measurement', () => {
      const body = dashboardBody(template);
      const monitorLogsId = onlyLogicalId(
        template,
        'AWS::Logs::LogGroup',
        {},
        /KeyRegistryMonitorFunctionLogs/,
      );

      expect(body).toContain('"type":"log"');
      expect(body).toContain(`SOURCE '${JSON.stringify({ Ref: monitorLogsId })}'`);
      expect(body).toContain('filter message = \\"key shard measured\\"');
      expect(body).toContain('by shard');
      expect(body).toContain('sort fill desc');
      expect(body).toContain('"title":"Fullest key shards, at the latest hourly measurement"');
    });

    it('graphs the monitor’s runs, failed runs and runs its schedule did not deliver, per hour', () => {
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

    it('shows the state of every alarm', () => {
      const body = dashboardBody(template);

      for (const alarmId of Object.keys(resources(template, 'AWS::CloudWatch::Alarm'))) {
        expect(body).toContain(JSON.stringify({ 'Fn::GetAtt': [alarmId, 'Arn'] }));
      }
    });
  });

  describe('saved queries', () => {
    let handlerLogsId: string;

    beforeAll(() => {
      handlerLogsId = onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /HandlerLogs/);
    });

    it.each<[string, string[]]>([
      [
        'Test/Requests by app and key id',
        ['message = "request accepted"', 'count(*)', 'by appId, keyId', 'latest(@timestamp)'],
      ],
      [
        'Test/401s by reason and source IP',
        ['message = "request refused"', 'status = 401', 'by reason, sourceIp, appId', 'count(*)'],
      ],
      [
        'Test/Expired keys and networks not allowed, by app and key id',
        [
          'message = "request refused"',
          'reason = "expired_key" or reason = "source_not_allowed"',
          'by reason, appId, keyId, sourceIp',
          'count(*) as refusals',
          'latest(@timestamp) as lastSeen',
        ],
      ],
      [
        'Test/503s and key refresh failures per minute',
        [
          'message = "keys unavailable"',
          'message = "keys refresh failed"',
          'by bin(1m), message',
          'max(staleKeysAgeSeconds)',
          'latest(error)',
        ],
      ],
    ])('"%s" reads the Lambda log group for its fields', (name, fragments) => {
      const [query] = Object.values(resources(template, 'AWS::Logs::QueryDefinition')).filter(
        (resource) => resource.Properties.Name === name,
      );

      expect(query?.Properties.LogGroupNames).toEqual([{ Ref: handlerLogsId }]);
      for (const fragment of fragments) expect(query?.Properties.QueryString).toContain(fragment);
    });

    it('"Test/Key registry by shard: fill, apps, keys, expiring, unreadable" reads the monitor’s log group: the latest of each shard, fullest first', () => {
      const monitorLogsId = onlyLogicalId(
        template,
        'AWS::Logs::LogGroup',
        {},
        /KeyRegistryMonitorFunctionLogs/,
      );
      const [query] = Object.values(resources(template, 'AWS::Logs::QueryDefinition')).filter(
        (resource) =>
          resource.Properties.Name === 'Test/Key registry by shard: fill, apps, keys, expiring, unreadable',
      );

      expect(query?.Properties.LogGroupNames).toEqual([{ Ref: monitorLogsId }]);
      for (const fragment of [
        'filter message = "key shard measured"',
        'latest(state) as shardState',
        'latest(fillPercent) as fill',
        'latest(keysExpiringSoon) as expiringSoon',
        'latest(appsElsewhere) as toMove',
        'latest(problem) as lastProblem',
        'by shard',
        'sort fill desc',
      ]) {
        expect(query?.Properties.QueryString).toContain(fragment);
      }
    });

    it('are exactly those five', () => {
      template.resourceCountIs('AWS::Logs::QueryDefinition', 5);
    });
  });

  describe('tracing, off by default', () => {
    it('leaves the function and the stage untraced, with no X-Ray permission to acknowledge', () => {
      template.hasResourceProperties('AWS::Lambda::Function', { TracingConfig: Match.absent() });
      template.hasResourceProperties('AWS::ApiGateway::Stage', { TracingEnabled: Match.absent() });
      expect(JSON.stringify(policyStatements(template))).not.toContain('xray:');
      const acknowledged = Object.entries(resources(template, 'AWS::IAM::Policy')).filter(
        ([, policy]) => policy.Metadata !== undefined,
      );
      // Only the monitor's policy, for BatchGetSecretValue on "*" (lib/key-registry-monitor.ts).
      expect(acknowledged.map(([id]) => id)).toEqual([
        expect.stringMatching(/^PaymentApiKeyRegistryMonitorFunctionRoleDefaultPolicy/) as unknown,
      ]);
    });
  });

  it('tells the Lambda the metrics namespace and the service name', () => {
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: {
        Variables: Match.objectLike({
          METRICS_NAMESPACE: 'PaymentApi',
          SERVICE_NAME: 'Test',
        }),
      },
    });
  });
});

describe('PaymentApi monitoring with per-app rate limits', () => {
  let template: Template;
  let tableId: string;

  beforeAll(() => {
    ({ template } = synthesize({
      appRateLimit: { perSecond: 20 },
      monitoring: { alarmEmail: 'oncall@example.com' },
    }));
    tableId = onlyLogicalId(template, 'AWS::DynamoDB::Table');
  });

  describe('the RateLimiterUnavailable alarm', () => {
    it('goes off on any request the limiter could not count in 5 minutes, and clears after 5 quiet ones', () => {
      expect(alarmsByName(template)['Test-RateLimiterUnavailable']).toMatchObject({
        Namespace: CUSTOM.namespace,
        Dimensions: CUSTOM.dimensions,
        MetricName: 'RateLimiterUnavailable',
        Statistic: 'Sum',
        Period: 60,
        EvaluationPeriods: 5,
        DatapointsToAlarm: 1,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        Threshold: 1,
        TreatMissingData: 'notBreaching',
      });
    });

    it('says that failing local counted those requests in each environment, where to look and what to do, then links its runbook', () => {
      const description = String(alarmsByName(template)['Test-RateLimiterUnavailable']?.AlarmDescription);

      for (const fragment of [
        'within 150 ms',
        'appRateLimitFailure=local (this stack)',
        'counted those requests itself',
        '"rate limiter unavailable"',
        'throttled writes',
        'dynamodb:UpdateItem',
        'ResourceNotFound',
      ]) {
        expect(description).toContain(fragment);
      }
      expect(description).toMatch(/ Runbook: docs\/operations\.md#ratelimiterunavailable$/);
      expect(description.length).toBeLessThanOrEqual(1024);
    });

    it('notifies the alarm topic of it and of its recovery, like every other alarm', () => {
      const topicId = onlyLogicalId(template, 'AWS::SNS::Topic');

      template.resourceCountIs('AWS::CloudWatch::Alarm', 12);
      template.allResourcesProperties('AWS::CloudWatch::Alarm', {
        AlarmActions: [{ Ref: topicId }],
        OKActions: [{ Ref: topicId }],
      });
    });
  });

  it('leaves the KeysUnavailable alarm as it was when failing open: a 503 then never comes from the limiter', () => {
    const withoutLimits = synthesize().template;

    expect(alarmsByName(template)['Test-KeysUnavailable']?.AlarmDescription).toBe(
      alarmsByName(withoutLimits)['Test-KeysUnavailable']?.AlarmDescription,
    );
  });

  describe('when failing closed', () => {
    let alarms: Record<string, Record<string, unknown>>;

    beforeAll(() => {
      alarms = alarmsByName(synthesize({ appRateLimit: { perSecond: 20, failure: 'closed' } }).template);
    });

    it('says in RateLimiterUnavailable that those requests got 503', () => {
      const description = String(alarms['Test-RateLimiterUnavailable']?.AlarmDescription);

      expect(description).toContain('appRateLimitFailure=closed (this stack) those requests got 503');
      expect(description.length).toBeLessThanOrEqual(1024);
    });

    it('says in KeysUnavailable that a 503 can also come from the limiter', () => {
      const description = String(alarms['Test-KeysUnavailable']?.AlarmDescription);

      expect(description).toContain(
        'With appRateLimitFailure=closed a 503 can also come from the rate limiter',
      );
      expect(description).toContain('see RateLimiterUnavailable');
      expect(description).toMatch(/ Runbook: docs\/operations\.md#keysunavailable$/);
      expect(description.length).toBeLessThanOrEqual(1024);
    });
  });

  describe('dashboard', () => {
    it('counts the 429s among the outcomes', () => {
      expect(dashboardBody(template)).toContain(
        `[${dashboardMetric('Throttled')},{"label":"Throttled","period":60,"stat":"Sum"}]],"yAxis"`,
      );
    });

    it('graphs the 429s and the requests the limiter could not count, per minute', () => {
      const body = dashboardBody(template);
      const widget = body.slice(body.indexOf('"title":"Per-app rate limits'));

      expect(widget).toMatch(/^"title":"Per-app rate limits: 429s and limiter unavailable \(per minute\)"/);
      for (const name of RATE_LIMIT_METRICS) {
        expect(widget).toContain(`[${dashboardMetric(name)},{"label":"${name}","period":60,"stat":"Sum"}]`);
      }
    });

    it('graphs the table’s UpdateItem latency and throttled writes, where a slow or throttled limiter shows', () => {
      const body = dashboardBody(template);
      const table = JSON.stringify({ Ref: tableId });

      expect(body).toContain(
        `"AWS/DynamoDB","SuccessfulRequestLatency","Operation","UpdateItem","TableName","${table}"`,
      );
      expect(body).toContain(`"AWS/DynamoDB","WriteThrottleEvents","TableName","${table}"`);
    });

    it('shows the state of the RateLimiterUnavailable alarm', () => {
      const alarmId = onlyLogicalId(template, 'AWS::CloudWatch::Alarm', {
        Properties: { AlarmName: 'Test-RateLimiterUnavailable' },
      });

      expect(dashboardBody(template)).toContain(JSON.stringify({ 'Fn::GetAtt': [alarmId, 'Arn'] }));
    });
  });

  it('saves "429s by app": which apps are throttled, how often, and when last, from the Lambda log group', () => {
    const handlerLogsId = onlyLogicalId(template, 'AWS::Logs::LogGroup', {}, /HandlerLogs/);
    const [query] = Object.values(resources(template, 'AWS::Logs::QueryDefinition')).filter(
      (resource) => resource.Properties.Name === 'Test/429s by app',
    );

    template.resourceCountIs('AWS::Logs::QueryDefinition', 6);
    expect(query?.Properties.LogGroupNames).toEqual([{ Ref: handlerLogsId }]);
    expect(query?.Properties.QueryString).toBe(
      'filter message = "request refused" and status = 429\n' +
        '| stats count(*) as refusals, latest(@timestamp) as lastSeen by appId\n' +
        '| sort refusals desc',
    );
  });
});

describe('PaymentApi monitoring with alarmEmail', () => {
  let template: Template;
  let topicId: string;
  let keyId: string;

  beforeAll(() => {
    ({ template } = synthesize({ monitoring: { alarmEmail: 'oncall@example.com' } }));
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

  it('sends every alarm and every recovery to that topic', () => {
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
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

describe('PaymentApi monitoring with an existing topic', () => {
  const topicArn = 'arn:aws:sns:eu-west-1:123456789012:oncall';

  it.each<[string, () => Template]>([
    [
      'alarmTopic on the construct',
      () =>
        synthesize(
          {},
          {
            extra: (stack) => ({
              monitoring: { alarmTopic: sns.Topic.fromTopicArn(stack, 'Oncall', topicArn) },
            }),
          },
        ).template,
    ],
    [
      'alarmTopicArn on the stack',
      () => synthesizeStack('PaymentApi', { monitoring: { alarmTopicArn: topicArn } }),
    ],
  ])('sends every alarm and recovery to it, given as %s, and creates no topic', (_case, build) => {
    // Act
    const template = build();

    // Assert
    template.resourceCountIs('AWS::SNS::Topic', 0);
    template.resourceCountIs('AWS::SNS::TopicPolicy', 0);
    template.resourceCountIs('AWS::KMS::Key', 0);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 11);
    template.allResourcesProperties('AWS::CloudWatch::Alarm', {
      AlarmActions: [topicArn],
      OKActions: [topicArn],
    });
  });
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
    const alarms = alarmsByName(template);

    for (const name of [
      'Test-KeysUnavailable',
      'Test-KeyRefreshFailing',
      'Test-UnauthorizedRequests',
      'Test-KeysExpiringSoon',
      'Test-SecretNearlyFull',
      'Test-KeyShardsUnreadable',
    ]) {
      expect(alarms[name]).toMatchObject({ Namespace: 'Payments/Staging' });
    }
    expect(dashboardBody(template)).toContain('["Payments/Staging","Accepted","Service","Test"');
    expect(dashboardBody(template)).toContain('["Payments/Staging","SecretFill","Service","Test"');
    for (const fn of ['handler', 'monitor'] as const) {
      expect(
        (
          template.toJSON() as {
            Resources: Record<
              string,
              { Properties: { Environment: { Variables: Record<string, unknown> } } }
            >;
          }
        ).Resources[functionLogicalId(template, fn)]?.Properties.Environment.Variables.METRICS_NAMESPACE,
      ).toBe('Payments/Staging');
    }
  });
});

describe('PaymentApi monitoring with a 30-day key expiry warning', () => {
  it('tells the monitor, which counts, the window (only the monitor), and states it in the alarm that the count raises', () => {
    const { template } = synthesize({ keyExpiryWarning: Duration.days(30) });

    expect(
      Object.keys(
        template.findResources('AWS::Lambda::Function', {
          Properties: { Environment: { Variables: Match.objectLike({ KEY_EXPIRY_WARNING_DAYS: '30' }) } },
        }),
      ).sort(),
    ).toEqual([functionLogicalId(template, 'monitor')]);
    expect(alarmsByName(template)['Test-KeysExpiringSoon']?.AlarmDescription).toContain(
      'expires within 30 days',
    );
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
    const policies = resources(template, 'AWS::IAM::Policy');
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
  it.each<[string, MonitoringOptions, string]>([
    [
      'a namespace with a space',
      { metricsNamespace: 'Payment Api' },
      'monitoring.metricsNamespace must be 1 to 255 letters, digits or . _ - / # : and not start with "AWS/", got "Payment Api"',
    ],
    [
      'a namespace reserved for AWS',
      { metricsNamespace: 'AWS/Payments' },
      'monitoring.metricsNamespace must be 1 to 255 letters, digits or . _ - / # : and not start with "AWS/", got "AWS/Payments"',
    ],
    [
      'an empty namespace',
      { metricsNamespace: '' },
      'monitoring.metricsNamespace must be 1 to 255 letters, digits or . _ - / # : and not start with "AWS/", got ""',
    ],
    [
      'a zero unauthorized threshold',
      { unauthorizedAlarmThreshold: 0 },
      'monitoring.unauthorizedAlarmThreshold must be a whole number of 401 answers in 5 minutes from 1 to 1000000, got 0',
    ],
    [
      'a fractional unauthorized threshold',
      { unauthorizedAlarmThreshold: 2.5 },
      'monitoring.unauthorizedAlarmThreshold must be a whole number of 401 answers in 5 minutes from 1 to 1000000, got 2.5',
    ],
    [
      'a latency threshold beyond the integration time-out',
      { latencyAlarmThreshold: Duration.seconds(30) },
      'monitoring.latencyAlarmThreshold must be a whole number of milliseconds from 1 to 29000, got 30000',
    ],
    [
      'a zero latency threshold',
      { latencyAlarmThreshold: Duration.millis(0) },
      'monitoring.latencyAlarmThreshold must be a whole number of milliseconds from 1 to 29000, got 0',
    ],
    [
      'a zero error rate',
      { serverErrorRateAlarmThreshold: 0 },
      'monitoring.serverErrorRateAlarmThreshold must be a percentage greater than 0 and less than 100, got 0',
    ],
    [
      'an error rate of 100%',
      { serverErrorRateAlarmThreshold: 100 },
      'monitoring.serverErrorRateAlarmThreshold must be a percentage greater than 0 and less than 100, got 100',
    ],
    [
      'an address without a domain',
      { alarmEmail: 'oncall' },
      'monitoring.alarmEmail must be one email address (name@example.com), got "oncall"',
    ],
    [
      'two addresses',
      { alarmEmail: 'a@example.com, b@example.com' },
      'monitoring.alarmEmail must be one email address (name@example.com), got "a@example.com, b@example.com"',
    ],
  ])('refuses %s', (_case, monitoring, message) => {
    expect(() => {
      constructUnbundled({ monitoring });
    }).toThrow(message);
  });

  it('refuses alarmEmail and alarmTopic together', () => {
    expect(() =>
      synthesize(
        {},
        {
          extra: (stack) => ({
            monitoring: {
              alarmEmail: 'oncall@example.com',
              alarmTopic: sns.Topic.fromTopicArn(
                stack,
                'Oncall',
                'arn:aws:sns:eu-west-1:123456789012:oncall',
              ),
            },
          }),
        },
      ),
    ).toThrow(
      'Give monitoring.alarmEmail or monitoring.alarmTopic, not both: subscribe the address to your topic to get notices from both',
    );
  });

  it('refuses alarmEmail and alarmTopicArn together on the stack', () => {
    expect(() =>
      synthesizeStack('PaymentApi', {
        monitoring: {
          alarmEmail: 'oncall@example.com',
          alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall',
        },
      }),
    ).toThrow(
      'Give monitoring.alarmEmail or monitoring.alarmTopicArn, not both: subscribe the address to your topic to get notices from both',
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

describe('two environments in one account', () => {
  let production: Template;
  let staging: Template;

  beforeAll(() => {
    // Arrange: both stacks exist before either is synthesized, as in one CDK app.
    const app = unbundledApp();
    const props = { monitoring: { alarmEmail: 'oncall@example.com' } };
    const productionStack = new PaymentApiStack(app, 'PaymentApi', props);
    const stagingStack = new PaymentApiStack(app, 'PaymentApi-staging', props);
    production = Template.fromStack(productionStack);
    staging = Template.fromStack(stagingStack);
  });

  function names(template: Template): string[] {
    const of = (type: string, property: string): string[] =>
      Object.values(resources(template, type)).map((resource) =>
        JSON.stringify(resource.Properties[property]),
      );
    return [
      ...of('AWS::CloudWatch::Alarm', 'AlarmName'),
      ...of('AWS::CloudWatch::Dashboard', 'DashboardName'),
      ...of('AWS::Logs::QueryDefinition', 'Name'),
    ];
  }

  it('share no alarm, dashboard or query name', () => {
    const productionNames = names(production);
    const stagingNames = names(staging);

    expect(productionNames).toHaveLength(17);
    expect(new Set([...productionNames, ...stagingNames]).size).toBe(34);
  });

  it('emit and watch their metrics under their own Service dimension', () => {
    const serviceOf = (template: Template): unknown[] =>
      Object.values(alarmsByName(template))
        .filter((alarm) => alarm.Namespace === 'PaymentApi')
        .map((alarm) => alarm.Dimensions);

    expect(serviceOf(production)).toEqual(Array(6).fill([{ Name: 'Service', Value: 'PaymentApi' }]));
    expect(serviceOf(staging)).toEqual(Array(6).fill([{ Name: 'Service', Value: 'PaymentApi-staging' }]));
    staging.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: Match.objectLike({ SERVICE_NAME: 'PaymentApi-staging' }) },
    });
  });
});

describe('PaymentApi monitoring with scheduled rotation', () => {
  let template: Template;
  let rotationFunctionId: string;
  let topicId: string;

  beforeAll(() => {
    ({ template } = synthesize({
      rotation: { every: Duration.days(30) },
      monitoring: { alarmEmail: 'oncall@example.com' },
    }));
    rotationFunctionId = onlyLogicalId(template, 'AWS::Lambda::Function', {}, /KeyRotationFunction/);
    topicId = onlyLogicalId(template, 'AWS::SNS::Topic');
  });

  it('alarms when any step of the rotation function fails, and notifies the topic of it and of the recovery', () => {
    expect(alarmsByName(template)['Test-RotationFailing']).toMatchObject({
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: { Ref: rotationFunctionId } }],
      Statistic: 'Sum',
      Period: 60,
      EvaluationPeriods: 5,
      DatapointsToAlarm: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 1,
      TreatMissingData: 'notBreaching',
      AlarmActions: [{ Ref: topicId }],
      OKActions: [{ Ref: topicId }],
    });
  });

  it('tells on-call where to look and how to retry and unblock a rotation, then links its runbook section', () => {
    const description = String(alarmsByName(template)['Test-RotationFailing']?.AlarmDescription);

    for (const fragment of [
      'rotation step failed',
      'aws secretsmanager rotate-secret --secret-id <secret ARN> --region <region>',
      'AWSPENDING',
      'aws secretsmanager update-secret-version-stage --secret-id <secret ARN> --version-stage AWSPENDING ' +
        '--remove-from-version-id <version id> --region <region>',
    ]) {
      expect(description).toContain(fragment);
    }
    expect(description).toMatch(/ Runbook: docs\/operations\.md#rotationfailing$/);
    expect(description.length).toBeLessThanOrEqual(1024);
  });

  it("shows the alarm's state and the rotation function's runs and failures on the dashboard", () => {
    const body = dashboardBody(template);
    const alarmId = onlyLogicalId(template, 'AWS::CloudWatch::Alarm', {
      Properties: { AlarmName: 'Test-RotationFailing' },
    });

    expect(body).toContain(JSON.stringify({ 'Fn::GetAtt': [alarmId, 'Arn'] }));
    for (const metric of ['Invocations', 'Errors']) {
      expect(body).toContain(
        `"AWS/Lambda","${metric}","FunctionName","${JSON.stringify({ Ref: rotationFunctionId })}"`,
      );
    }
  });
});
