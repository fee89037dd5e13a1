import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import { PaymentApi, type PaymentApiProps } from '../../../lib/payment-api';
import { onlyLogicalId, synthesize, unbundledApp } from '../../support/construct-template';

const DOMAIN_NAME = 'payments.example.com';
const CERTIFICATE_ARN = 'arn:aws:acm:eu-west-1:123456789012:certificate/12345678-1234-1234-1234-123456789012';

/** The construct with a custom domain; the certificate and zone are imported into its stack. */
function withDomain(
  options: { zone?: string; disableExecuteApiEndpoint?: boolean; domainName?: string } = {},
): { template: Template; paymentApi: PaymentApi } {
  const stack = new Stack(unbundledApp(), 'Test');
  const paymentApi = new PaymentApi(stack, 'PaymentApi', {
    disableExecuteApiEndpoint: options.disableExecuteApiEndpoint,
    customDomain: {
      domainName: options.domainName ?? DOMAIN_NAME,
      certificate: acm.Certificate.fromCertificateArn(stack, 'Certificate', CERTIFICATE_ARN),
      hostedZone:
        options.zone === undefined
          ? undefined
          : route53.HostedZone.fromHostedZoneAttributes(stack, 'Zone', {
              hostedZoneId: 'Z0123456789ABCDEFGHIJ',
              zoneName: options.zone,
            }),
    },
  });
  return { template: Template.fromStack(stack), paymentApi };
}

describe('PaymentApi with a custom domain', () => {
  let template: Template;
  let paymentApi: PaymentApi;

  beforeAll(() => {
    ({ template, paymentApi } = withDomain());
  });

  it('creates a regional domain with TLS 1.2 and the given certificate', () => {
    template.resourceCountIs('AWS::ApiGateway::DomainName', 1);
    template.hasResourceProperties('AWS::ApiGateway::DomainName', {
      DomainName: DOMAIN_NAME,
      EndpointConfiguration: { Types: ['REGIONAL'] },
      RegionalCertificateArn: CERTIFICATE_ARN,
      SecurityPolicy: 'TLS_1_2',
    });
  });

  it('maps the API’s stage at the domain’s root, so the path has no stage', () => {
    const mappings = template.findResources('AWS::ApiGateway::BasePathMapping');

    expect(Object.values(mappings)).toEqual([
      expect.objectContaining({
        Properties: {
          DomainName: { Ref: onlyLogicalId(template, 'AWS::ApiGateway::DomainName') },
          RestApiId: { Ref: onlyLogicalId(template, 'AWS::ApiGateway::RestApi') },
          Stage: { Ref: onlyLogicalId(template, 'AWS::ApiGateway::Stage') },
        },
      }),
    ]);
  });

  it('creates no DNS record without a hosted zone', () => {
    template.resourceCountIs('AWS::Route53::RecordSet', 0);
  });

  it('keeps the default endpoint open, and the execute-api URL as the payment URL', () => {
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: false });
    expect(paymentApi.customDomainPaymentUrl).toBe('https://payments.example.com/payment');
    expect(paymentApi.paymentUrl).not.toContain('payments.example.com');
  });
});

describe('PaymentApi with a custom domain and its hosted zone', () => {
  it.each([
    ['a parent domain', 'example.com'],
    ['the domain itself', DOMAIN_NAME],
  ])('adds one alias A record for the domain in a zone for %s', (_case, zone) => {
    // Act
    const { template } = withDomain({ zone });

    // Assert
    const domainId = onlyLogicalId(template, 'AWS::ApiGateway::DomainName');
    template.resourceCountIs('AWS::Route53::RecordSet', 1);
    template.hasResourceProperties('AWS::Route53::RecordSet', {
      Name: `${DOMAIN_NAME}.`,
      Type: 'A',
      HostedZoneId: 'Z0123456789ABCDEFGHIJ',
      AliasTarget: {
        DNSName: { 'Fn::GetAtt': [domainId, 'RegionalDomainName'] },
        HostedZoneId: { 'Fn::GetAtt': [domainId, 'RegionalHostedZoneId'] },
      },
    });
  });
});

describe('PaymentApi with the default endpoint closed', () => {
  it('disables the execute-api endpoint and gives the custom domain’s URL as the payment URL', () => {
    // Act
    const { template, paymentApi } = withDomain({ disableExecuteApiEndpoint: true });

    // Assert
    template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: true });
    expect(paymentApi.paymentUrl).toBe('https://payments.example.com/payment');
  });
});

describe('PaymentApi without a custom domain', () => {
  // No domain, mapping or record: payment-api-stack 'keep their logical IDs with the defaults'.
  it('leaves the default endpoint open', () => {
    const { template } = synthesize();

    template.hasResourceProperties('AWS::ApiGateway::RestApi', { DisableExecuteApiEndpoint: false });
  });
});

describe('custom domain props validation', () => {
  it.each([
    [
      'an upper-case domain name',
      { domainName: 'Payments.example.com' },
      'domainName must be a lower-case domain name such as payments.example.com, got "Payments.example.com"',
    ],
    [
      'a single-label domain name',
      { domainName: 'payments' },
      'domainName must be a lower-case domain name such as payments.example.com, got "payments"',
    ],
    [
      'a hosted zone that cannot hold the domain',
      { zone: 'example.org' },
      'hostedZone "example.org" cannot hold a record for domainName "payments.example.com"',
    ],
    [
      'a hosted zone whose name only ends like the domain',
      { zone: 'ample.com' },
      'hostedZone "ample.com" cannot hold a record for domainName "payments.example.com"',
    ],
  ])('rejects %s', (_case, options, message) => {
    expect(() => withDomain(options)).toThrow(message);
  });

  it("rejects a certificate from another region than the stack's", () => {
    // Arrange
    const stack = new Stack(unbundledApp(), 'Test', {
      env: { account: '123456789012', region: 'us-east-2' },
    });
    const props: PaymentApiProps = {
      customDomain: {
        domainName: DOMAIN_NAME,
        certificate: acm.Certificate.fromCertificateArn(stack, 'Certificate', CERTIFICATE_ARN),
      },
    };

    // Act / Assert
    expect(() => new PaymentApi(stack, 'PaymentApi', props)).toThrow(
      "certificate must be in the stack's region (us-east-2) for a regional custom domain, got one in eu-west-1",
    );
  });

  it('rejects closing the default endpoint without a custom domain', () => {
    expect(() => synthesize({ disableExecuteApiEndpoint: true })).toThrow(
      'disableExecuteApiEndpoint needs customDomain: with the default endpoint closed, the API has no other way in',
    );
  });
});
