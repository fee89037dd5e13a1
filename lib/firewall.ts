import { Names } from 'aws-cdk-lib';
import type * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import { requireFormat, requireWholeNumber, type TextFormat, type WholeNumberRange } from './validation';

/** WAF's bounds for a rate-based rule's limit (requests per evaluation window, per source IP). */
export const FIREWALL_LIMITS = {
  rateLimit: { min: 10, max: 2_000_000_000, unit: 'requests per 5 minutes' },
} as const satisfies Record<string, WholeNumberRange>;

/** The window the rate limit counts over: WAF's default and the figure its console shows. */
const RATE_WINDOW_SECONDS = 300;

export const WEB_ACL_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[\w-]{1,128}\/[\w-]{1,128}$/,
  description: 'a regional WAFv2 web ACL ARN (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>)',
};

/**
 * Rules of AWSManagedRulesCommonRuleSet that only count here: each would refuse requests the payment contract
 * accepts. The rest of the group blocks as AWS configures it.
 */
export const COUNTED_COMMON_RULES = [
  // Blocks bodies over 8 KB; the contract accepts any JSON body API Gateway accepts (up to 10 MB).
  'SizeRestrictions_BODY',
  // Blocks requests without a User-Agent; server-to-server clients need not send one, App-key identifies them.
  'NoUserAgent_HEADER',
] as const;

/** The web ACL that `waf` creates. */
export interface WafOptions {
  /**
   * Requests one source IP address may make in 5 minutes before the web ACL blocks it (403) for as long as its
   * rate stays above the limit. Counts every request, good and bad: set it above your busiest client's
   * peak, for clients behind one NAT address together. 10 to 2,000,000,000.
   */
  readonly rateLimit: number;
}

export interface FirewallProps {
  /** The API stage whose requests the web ACL inspects. */
  readonly stage: apigateway.Stage;

  /**
   * A new web ACL: this rate-based rule per source IP, then AWS managed rule groups for known bad inputs and
   * common threats. Give this or `webAclArn`.
   * @default - none
   */
  readonly waf?: WafOptions;

  /**
   * An existing regional web ACL (in the stage's region) to associate with the stage instead.
   * @default - none
   */
  readonly webAclArn?: string;
}

type WebAclChoice = { readonly waf: WafOptions } | { readonly webAclArn: string };

/** Throws on the first invalid option. Values that are tokens are left to CloudFormation. */
export function validateWafOptions(waf: WafOptions): void {
  requireWholeNumber('waf.rateLimit', FIREWALL_LIMITS.rateLimit, waf.rateLimit);
}

/** Throws on invalid props; otherwise says which web ACL to use. */
function chooseWebAcl({ waf, webAclArn }: FirewallProps): WebAclChoice {
  if (waf !== undefined && webAclArn === undefined) {
    validateWafOptions(waf);
    return { waf };
  }
  if (webAclArn !== undefined && waf === undefined) {
    requireFormat('webAclArn', WEB_ACL_ARN, webAclArn);
    return { webAclArn };
  }
  throw new Error('Firewall needs exactly one of waf (a new web ACL) and webAclArn (an existing one)');
}

/**
 * A regional WAFv2 web ACL in front of an API stage: a new one that blocks key guessing by rate and known
 * attack patterns before they cost a Lambda call, or an existing one the operator manages. Blocked requests get
 * API Gateway's WAF_FILTERED gateway response.
 */
export class Firewall extends Construct {
  /** The web ACL associated with the stage. */
  public readonly webAclArn: string;
  /** The web ACL, when this construct created it. */
  public readonly webAcl?: wafv2.CfnWebACL;

  constructor(scope: Construct, id: string, props: FirewallProps) {
    super(scope, id);
    const choice = chooseWebAcl(props);

    if ('waf' in choice) {
      this.webAcl = this.createWebAcl(choice.waf);
      this.webAclArn = this.webAcl.attrArn;
    } else {
      this.webAclArn = choice.webAclArn;
    }
    new wafv2.CfnWebACLAssociation(this, 'Association', {
      resourceArn: props.stage.stageArn,
      webAclArn: this.webAclArn,
    });
  }

  private createWebAcl(options: WafOptions): wafv2.CfnWebACL {
    // Web ACL names are unique per account and region, and CloudWatch tells web ACLs apart by metric name:
    // both come from the stack name and this construct's path, so environments never share them.
    const name = Names.uniqueResourceName(this, {
      maxLength: 96,
      separator: '-',
      allowedSpecialCharacters: '-',
    });
    const visibility = (metric: string): wafv2.CfnWebACL.VisibilityConfigProperty => ({
      cloudWatchMetricsEnabled: true,
      sampledRequestsEnabled: true,
      metricName: metric === '' ? name : `${name}-${metric}`,
    });
    const managedGroup = (
      priority: number,
      groupName: string,
      metric: string,
      countedRules: readonly string[] = [],
    ): wafv2.CfnWebACL.RuleProperty => ({
      name: groupName,
      priority,
      overrideAction: { none: {} },
      statement: {
        managedRuleGroupStatement: {
          vendorName: 'AWS',
          name: groupName,
          ...(countedRules.length > 0
            ? {
                ruleActionOverrides: countedRules.map((rule) => ({ name: rule, actionToUse: { count: {} } })),
              }
            : {}),
        },
      },
      visibilityConfig: visibility(metric),
    });

    return new wafv2.CfnWebACL(this, 'WebAcl', {
      name,
      description: 'payment-api: per-IP rate limit and AWS managed rules in front of the API stage',
      scope: 'REGIONAL',
      defaultAction: { allow: {} },
      visibilityConfig: visibility(''),
      rules: [
        // First, so a client guessing keys is blocked before any other rule or the Lambda spends on it.
        {
          name: 'RateLimitPerIp',
          priority: 0,
          action: { block: {} },
          statement: {
            rateBasedStatement: {
              aggregateKeyType: 'IP',
              limit: options.rateLimit,
              evaluationWindowSec: RATE_WINDOW_SECONDS,
            },
          },
          visibilityConfig: visibility('RateLimitPerIp'),
        },
        managedGroup(1, 'AWSManagedRulesKnownBadInputsRuleSet', 'KnownBadInputs'),
        managedGroup(2, 'AWSManagedRulesCommonRuleSet', 'CommonRuleSet', COUNTED_COMMON_RULES),
      ],
    });
  }
}
