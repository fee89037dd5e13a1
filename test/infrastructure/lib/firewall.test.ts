import { App, Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { Firewall } from '../../../lib/firewall';
import {
  constructUnbundled,
  onlyLogicalId,
  synthesize,
  type Synthesized,
} from '../../support/construct-template';

const EXISTING_WEB_ACL_ARN =
  'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/shared/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';

interface Rule {
  readonly Name: string;
  readonly Priority: number;
  readonly Action?: unknown;
  readonly OverrideAction?: unknown;
  readonly Statement: Record<string, unknown>;
  readonly VisibilityConfig: { readonly MetricName: string };
}

interface WebAclProperties {
  readonly Name: string;
  readonly Rules: readonly Rule[];
  readonly VisibilityConfig: { readonly MetricName: string };
}

function webAclProperties(template: Template): WebAclProperties {
  const [acl] = Object.values(template.findResources('AWS::WAFv2::WebACL'));
  return (acl as { Properties: WebAclProperties }).Properties;
}

/** The association's ResourceArn names this stack's one stage, as CloudFormation builds a stage ARN. */
function expectAssociationWithTheStage(template: Template, webAclArn: unknown): void {
  const apiId = onlyLogicalId(template, 'AWS::ApiGateway::RestApi');
  const stageId = onlyLogicalId(template, 'AWS::ApiGateway::Stage');
  template.resourceCountIs('AWS::WAFv2::WebACLAssociation', 1);
  template.hasResourceProperties('AWS::WAFv2::WebACLAssociation', {
    WebACLArn: webAclArn,
    ResourceArn: {
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':apigateway:',
          { Ref: 'AWS::Region' },
          '::/restapis/',
          { Ref: apiId },
          '/stages/',
          { Ref: stageId },
        ],
      ],
    },
  });
}

describe('PaymentApi with a new web ACL (waf)', () => {
  let synthesized: Synthesized;
  let template: Template;
  let acl: WebAclProperties;

  beforeAll(() => {
    synthesized = synthesize({ waf: { rateLimit: 1500 } });
    template = synthesized.template;
    acl = webAclProperties(template);
  });

  it('creates one regional web ACL that allows what no rule blocks, with metrics and sampled requests on; it blocks a source IP over the limit per 5 minutes first, then applies the AWS managed rules for known bad inputs, then the common rule set only counting the body-size and missing User-Agent rules that would refuse valid payments, and no other rule', () => {
    const visibility = (metric: string) => ({
      CloudWatchMetricsEnabled: true,
      SampledRequestsEnabled: true,
      MetricName: metric,
    });

    template.resourceCountIs('AWS::WAFv2::WebACL', 1);
    expect(acl).toEqual({
      Name: acl.Name,
      Description: expect.any(String) as unknown,
      Scope: 'REGIONAL',
      DefaultAction: { Allow: {} },
      VisibilityConfig: visibility(acl.Name),
      Rules: [
        {
          Name: 'RateLimitPerIp',
          Priority: 0,
          Action: { Block: {} },
          Statement: {
            RateBasedStatement: { AggregateKeyType: 'IP', Limit: 1500, EvaluationWindowSec: 300 },
          },
          VisibilityConfig: visibility(`${acl.Name}-RateLimitPerIp`),
        },
        {
          Name: 'AWSManagedRulesKnownBadInputsRuleSet',
          Priority: 1,
          OverrideAction: { None: {} },
          Statement: {
            ManagedRuleGroupStatement: { VendorName: 'AWS', Name: 'AWSManagedRulesKnownBadInputsRuleSet' },
          },
          VisibilityConfig: visibility(`${acl.Name}-KnownBadInputs`),
        },
        {
          Name: 'AWSManagedRulesCommonRuleSet',
          Priority: 2,
          OverrideAction: { None: {} },
          Statement: {
            ManagedRuleGroupStatement: {
              VendorName: 'AWS',
              Name: 'AWSManagedRulesCommonRuleSet',
              RuleActionOverrides: [
                { Name: 'SizeRestrictions_BODY', ActionToUse: { Count: {} } },
                { Name: 'NoUserAgent_HEADER', ActionToUse: { Count: {} } },
              ],
            },
          },
          VisibilityConfig: visibility(`${acl.Name}-CommonRuleSet`),
        },
      ],
    });
  });

  it('is associated with the stage', () => {
    const aclId = onlyLogicalId(template, 'AWS::WAFv2::WebACL');

    expectAssociationWithTheStage(template, { 'Fn::GetAtt': [aclId, 'Arn'] });
  });
});

describe('PaymentApi with an existing web ACL (webAclArn)', () => {
  it('associates that web ACL with the stage and creates none', () => {
    // Act
    const { template } = synthesize({ webAclArn: EXISTING_WEB_ACL_ARN });

    // Assert
    template.resourceCountIs('AWS::WAFv2::WebACL', 0);
    expectAssociationWithTheStage(template, EXISTING_WEB_ACL_ARN);
  });
});

describe('firewall props validation', () => {
  it.each([
    [
      'a rate limit under WAF’s minimum of 10',
      { waf: { rateLimit: 9 } },
      'waf.rateLimit must be a whole number of requests per 5 minutes from 10 to 2000000000, got 9',
    ],
    [
      'a rate limit over WAF’s maximum',
      { waf: { rateLimit: 2_000_000_001 } },
      'waf.rateLimit must be a whole number of requests per 5 minutes from 10 to 2000000000, got 2000000001',
    ],
    [
      'a web ACL for CloudFront (global scope)',
      { webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/a1b2c3d4' },
      'webAclArn must be a regional WAFv2 web ACL ARN (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>), got "arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/a1b2c3d4"',
    ],
    [
      'a new web ACL and an existing one at once',
      { waf: { rateLimit: 100 }, webAclArn: EXISTING_WEB_ACL_ARN },
      'waf and webAclArn cannot both be set: the stage takes one web ACL, a new one or yours',
    ],
  ])('rejects %s', (_case, props, message) => {
    expect(() => {
      constructUnbundled(props);
    }).toThrow(message);
  });

  it('accepts the bounds WAF accepts', () => {
    expect(() => {
      constructUnbundled({ waf: { rateLimit: 10 } });
    }).not.toThrow();
    expect(() => {
      constructUnbundled({ waf: { rateLimit: 2_000_000_000 } });
    }).not.toThrow();
  });

  it('needs a new web ACL or an existing one when used on its own', () => {
    // Arrange
    const stack = new Stack(new App(), 'Test');
    const api = new apigateway.RestApi(stack, 'Api');
    api.root.addMethod('GET', new apigateway.MockIntegration());

    // Act / Assert
    expect(() => new Firewall(stack, 'Firewall', { stage: api.deploymentStage })).toThrow(
      'Firewall needs exactly one of waf (a new web ACL) and webAclArn (an existing one)',
    );
  });
});
