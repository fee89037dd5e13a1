import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { CONTEXT_SETTINGS, stackPropsFromContext } from '../../bin/payment-api';
import type { PaymentApiStackProps } from '../../lib/payment-api-stack';

function fromContext(context: Record<string, unknown>): PaymentApiStackProps {
  return stackPropsFromContext((key) => context[key]);
}

/** Durations compared by their value, the rest as they are. */
function comparable(props: PaymentApiStackProps): Record<string, unknown> {
  return {
    ...props,
    keyCacheTtl: props.keyCacheTtl?.toSeconds(),
    keyMaxStale: props.keyMaxStale?.toSeconds(),
    rotation: props.rotation && { everyDays: props.rotation.every.toDays(), keep: props.rotation.keep },
  };
}

describe('CDK app context', () => {
  it('reads every documented key from `-c key=value` strings', () => {
    // Arrange
    const context = {
      existingSecret: 'payment-api/keys',
      secretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      keyCacheTtlSeconds: '30',
      keyMaxStaleSeconds: '600',
      throttlingRateLimit: '12.5',
      throttlingBurstLimit: '25',
      stageName: 'v1',
      logRetentionDays: '90',
      memorySize: '512',
      logLevel: 'debug',
      rotationDays: '30',
      rotationKeep: '3',
    };

    // Act
    const props = fromContext(context);

    // Assert
    expect(comparable(props)).toEqual({
      existingSecret: 'payment-api/keys',
      secretKmsKeyArn: 'arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab',
      keyCacheTtl: 30,
      keyMaxStale: 600,
      throttlingRateLimit: 12.5,
      throttlingBurstLimit: 25,
      stageName: 'v1',
      logRetention: RetentionDays.THREE_MONTHS,
      memorySize: 512,
      logLevel: 'debug',
      rotation: { everyDays: 30, keep: 3 },
    });
    expect(Object.keys(context).sort()).toEqual(CONTEXT_SETTINGS.map((setting) => setting.key).sort());
  });

  it('takes numbers as cdk.json gives them', () => {
    const props = fromContext({
      keyCacheTtlSeconds: 45,
      memorySize: 1024,
      throttlingRateLimit: 0.5,
      logRetentionDays: 7,
      rotationDays: 7,
      rotationKeep: 4,
    });

    expect(comparable(props)).toEqual({
      keyCacheTtl: 45,
      keyMaxStale: undefined,
      memorySize: 1024,
      throttlingRateLimit: 0.5,
      logRetention: RetentionDays.ONE_WEEK,
      rotation: { everyDays: 7, keep: 4 },
    });
  });

  it('leaves absent, null and empty keys to the defaults', () => {
    expect(fromContext({ existingSecret: '', stageName: null })).toEqual({});
  });

  it('turns scheduled rotation on with rotationDays alone, leaving keep to its default', () => {
    const props = fromContext({ rotationDays: '90', rotationKeep: '' });

    expect(comparable(props).rotation).toEqual({ everyDays: 90, keep: undefined });
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'a word as seconds',
      { keyCacheTtlSeconds: 'soon' },
      'Context "keyCacheTtlSeconds" must be a whole number, got "soon"',
    ],
    [
      'fractional seconds',
      { keyMaxStaleSeconds: '1.5' },
      'Context "keyMaxStaleSeconds" must be a whole number, got "1.5"',
    ],
    ['a negative memory size', { memorySize: -1 }, 'Context "memorySize" must be a whole number, got -1'],
    [
      'a zero rate limit',
      { throttlingRateLimit: '0' },
      'Context "throttlingRateLimit" must be a positive number, got "0"',
    ],
    [
      'a burst limit with a unit',
      { throttlingBurstLimit: '10rps' },
      'Context "throttlingBurstLimit" must be a whole number, got "10rps"',
    ],
    [
      'a retention CloudWatch Logs does not offer',
      { logRetentionDays: '2' },
      'Context "logRetentionDays" must be one of 1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653, 9999 (days), got 2',
    ],
    [
      'an unknown log level',
      { logLevel: 'verbose' },
      'Context "logLevel" must be one of debug, info, warn, error, got "verbose"',
    ],
    ['a number as the secret', { existingSecret: 42 }, 'Context "existingSecret" must be a string, got 42'],
    [
      'a rotation period of zero days',
      { rotationDays: '0' },
      'Context "rotationDays" must be a whole number of days from 1 to 1000, got 0',
    ],
    [
      'a rotation period over 1000 days',
      { rotationDays: 1001 },
      'Context "rotationDays" must be a whole number of days from 1 to 1000, got 1001',
    ],
    [
      'a rotation period in words',
      { rotationDays: 'monthly' },
      'Context "rotationDays" must be a whole number, got "monthly"',
    ],
    [
      'keeping a single key',
      { rotationDays: '30', rotationKeep: '1' },
      'Context "rotationKeep" must be a whole number of at least 2, got 1',
    ],
    [
      'a number of keys to keep without a rotation period',
      { rotationKeep: '3' },
      'Context "rotationKeep" needs "rotationDays": without it there is no scheduled rotation',
    ],
  ])('rejects %s with a message naming the key', (_case, context, message) => {
    expect(() => fromContext(context)).toThrow(message);
  });

  it('documents each key once, with the prop it sets, its default and its meaning', () => {
    const keys = CONTEXT_SETTINGS.map((setting) => setting.key);

    expect(new Set(keys).size).toBe(keys.length);
    for (const setting of CONTEXT_SETTINGS) {
      expect({
        key: setting.key,
        hasDefault: setting.defaultValue !== '',
        hasMeaning: setting.meaning.length > 10,
      }).toEqual({ key: setting.key, hasDefault: true, hasMeaning: true });
    }
  });
});
