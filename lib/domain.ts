import { Stack, Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as targets from 'aws-cdk-lib/aws-route53-targets';
import { Construct } from 'constructs';
import { requireFormat, type TextFormat } from './validation';

/** Labels of lower-case letters, digits and inner hyphens, at least two; API Gateway refuses upper case. */
export const DOMAIN_NAME: TextFormat = {
  pattern: /^(?=.{4,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/,
  description: 'a lower-case domain name such as payments.example.com',
};

export const CERTIFICATE_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:acm:[a-z0-9-]+:\d{12}:certificate\/[A-Za-z0-9-]{1,128}$/,
  description: 'an ACM certificate ARN (arn:aws:acm:<region>:<account>:certificate/<id>)',
};

export const HOSTED_ZONE_ID: TextFormat = {
  pattern: /^[A-Z0-9]{1,32}$/,
  description: 'a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ',
};

/** A custom domain for the API, and optionally the DNS record that points it at the API. */
export interface CustomDomainOptions {
  /** The name clients call, such as `payments.example.com`: lower case, no wildcard. */
  readonly domainName: string;

  /**
   * An ACM certificate covering `domainName`, in the stack's region: a regional endpoint cannot use a
   * certificate from another region (us-east-1 included, unless the stack is there).
   */
  readonly certificate: acm.ICertificate;

  /**
   * The public hosted zone of `domainName` (or of a parent domain), where an alias A record for `domainName`
   * is created.
   * @default - no DNS record: point `domainName` at the domain's regional target yourself
   */
  readonly hostedZone?: route53.IHostedZone;
}

export interface CustomDomainProps extends CustomDomainOptions {
  /** The API served at the domain's root, through its deployment stage. */
  readonly restApi: apigateway.RestApi;
}

/** The region part of an ARN, or undefined when it is a token. */
function regionOfArn(arn: string): string | undefined {
  return Token.isUnresolved(arn) ? undefined : arn.split(':')[3];
}

/** Throws on the first invalid option; `scope` gives the stack's region, which the certificate must be in. */
export function validateCustomDomainOptions(scope: Construct, props: CustomDomainOptions): void {
  requireFormat('domainName', DOMAIN_NAME, props.domainName);
  const certificateRegion = regionOfArn(props.certificate.certificateArn);
  const stackRegion = Stack.of(scope).region;
  if (
    certificateRegion !== undefined &&
    !Token.isUnresolved(stackRegion) &&
    certificateRegion !== stackRegion
  ) {
    throw new Error(
      `certificate must be in the stack's region (${stackRegion}) for a regional custom domain, got one in ${certificateRegion}`,
    );
  }
  const zoneName = props.hostedZone?.zoneName.replace(/\.$/, '');
  if (
    zoneName !== undefined &&
    !Token.isUnresolved(zoneName) &&
    !Token.isUnresolved(props.domainName) &&
    props.domainName !== zoneName &&
    !props.domainName.endsWith(`.${zoneName}`)
  ) {
    throw new Error(`hostedZone "${zoneName}" cannot hold a record for domainName "${props.domainName}"`);
  }
}

/**
 * A regional API Gateway custom domain with TLS 1.2 or newer, serving the API's deployment stage at its root
 * (`https://<domain>/payment`, no stage in the path), with an alias record when a hosted zone is given.
 */
export class CustomDomain extends Construct {
  public readonly domain: apigateway.DomainName;
  /** The alias A record, when a hosted zone was given. */
  public readonly aliasRecord?: route53.ARecord;
  /** `https://<domainName>` */
  public readonly url: string;

  constructor(scope: Construct, id: string, props: CustomDomainProps) {
    super(scope, id);
    validateCustomDomainOptions(this, props);

    this.domain = new apigateway.DomainName(this, 'Domain', {
      domainName: props.domainName,
      certificate: props.certificate,
      endpointType: apigateway.EndpointType.REGIONAL,
      securityPolicy: apigateway.SecurityPolicy.TLS_1_2,
      mapping: props.restApi,
    });
    if (props.hostedZone) {
      // IPv4 only: the domain's regional endpoint is, as API Gateway makes it by default.
      this.aliasRecord = new route53.ARecord(this, 'AliasRecord', {
        zone: props.hostedZone,
        recordName: `${props.domainName}.`,
        target: route53.RecordTarget.fromAlias(new targets.ApiGatewayDomain(this.domain)),
        comment: 'payment-api: the custom domain of the API',
      });
    }
    this.url = `https://${props.domainName}`;
  }

  /** The full URL of `path` (which starts with "/") on this domain. */
  public urlForPath(path: string): string {
    return `${this.url}${path}`;
  }
}
