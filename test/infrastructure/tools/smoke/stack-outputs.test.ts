import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApiStack } from '../../../../lib/payment-api-stack';
import { STACK_OUTPUTS } from '../../../../tools/smoke/stack-target';
import { unbundledApp } from '../../../support/construct-template';

describe('the outputs --stack reads', () => {
  it('are the ones PaymentApiStack declares: the /payment URL and the keys secret', () => {
    // Arrange
    const app = unbundledApp();

    // Act
    const outputs = Template.fromStack(new PaymentApiStack(app, 'SmokeOutputs')).findOutputs('*');

    // Assert
    const paymentUrl = outputs[STACK_OUTPUTS.paymentUrl] as
      { Value: { 'Fn::Join': [string, unknown[]] } } | undefined;
    expect(paymentUrl?.Value['Fn::Join'][1].at(-1)).toMatch(/\/payment$/);
    expect(outputs[STACK_OUTPUTS.keysSecretArn]).toEqual(
      expect.objectContaining({ Value: { Ref: expect.stringMatching(/^PaymentApiKeysSecret/) as unknown } }),
    );
  });
});
