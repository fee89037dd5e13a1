import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import {
  RateLimitTable,
  validateAppRateLimitOptions,
  type AppRateLimitOptions,
} from '../../../lib/rate-limit-table';
import { resourcesOf, unbundledApp } from '../../support/construct-template';

describe('RateLimitTable', () => {
  let template: Template;
  let tableId: string;

  beforeAll(() => {
    // Arrange
    const stack = new Stack(unbundledApp(), 'Test');
    const table = new RateLimitTable(stack, 'RateLimit');
    table.grantCounterUpdates(new iam.Role(stack, 'Reader', { assumedBy: new iam.AccountRootPrincipal() }));

    // Act
    template = Template.fromStack(stack);
    tableId = stack.getLogicalId(table.table.node.defaultChild as dynamodb.CfnTable);
  });

  it('is one table of counters keyed by a string "pk" alone, billed per request, expiring by "expiresAt", disposable and unrecovered', () => {
    expect(resourcesOf(template, 'AWS::DynamoDB::Table')).toEqual({
      [tableId]: {
        Type: 'AWS::DynamoDB::Table',
        // No TableName: a name of CloudFormation's, so environments side by side never share counters.
        // No provisioned throughput and no index.
        Properties: {
          KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
          AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
          BillingMode: 'PAY_PER_REQUEST',
          // DynamoDB removes idle counters.
          TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: false },
          // The AWS owned key: no cost and no KMS call.
          SSESpecification: { SSEEnabled: false },
        },
        // Its counters are disposable.
        DeletionPolicy: 'Delete',
        UpdateReplacePolicy: 'Delete',
        // cdk-nag's finding on the missing point-in-time recovery, acknowledged on the table with its reason.
        Metadata: {
          cdk_nag: {
            rules_to_suppress: [
              {
                id: 'AwsSolutions-DDB3',
                reason: expect.stringMatching(/worthless a few seconds after/) as unknown,
              },
            ],
          },
        },
      },
    });
    template.resourceCountIs('AWS::KMS::Key', 0);
  });

  it('grants only dynamodb:UpdateItem, on the table itself', () => {
    template.hasResourceProperties('AWS::IAM::Policy', {
      PolicyDocument: {
        Statement: [
          { Effect: 'Allow', Action: 'dynamodb:UpdateItem', Resource: { 'Fn::GetAtt': [tableId, 'Arn'] } },
        ],
      },
    });
  });
});

describe('the appRateLimit options', () => {
  it.each<[string, AppRateLimitOptions, string]>([
    [
      'a rate above 10000 a second',
      { perSecond: 10_001 },
      'appRateLimit.perSecond must be a number of requests per second from 0.001 to 10000, got 10001',
    ],
    [
      'an infinite rate',
      { perSecond: Infinity },
      'appRateLimit.perSecond must be a number of requests per second from 0.001 to 10000, got Infinity',
    ],
    [
      'a zero burst',
      { perSecond: 1, burst: 0 },
      'appRateLimit.burst must be a whole number of requests from 1 to 100000, got 0',
    ],
    [
      'an unknown failure mode',
      { perSecond: 1, failure: 'ajar' as AppRateLimitOptions['failure'] },
      'appRateLimit.failure must be one of local, open, closed, got "ajar"',
    ],
  ])(
    'refuse %s, naming the option in the words the secret’s rateLimit and the Lambda use',
    (_case, options, message) => {
      expect(() => {
        validateAppRateLimitOptions(options);
      }).toThrow(message);
    },
  );

  it('accept the bounds', () => {
    expect(() => {
      validateAppRateLimitOptions({ perSecond: 0.001, burst: 1, failure: 'open' });
      validateAppRateLimitOptions({ perSecond: 10_000, burst: 100_000, failure: 'closed' });
    }).not.toThrow();
  });
});
