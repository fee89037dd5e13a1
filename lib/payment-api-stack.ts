import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { pickMonitoringOptions } from './monitoring';
import { PaymentApi, type PaymentApiProps } from './payment-api';

/** The construct's options that the stack passes on as they are. */
export type PaymentApiOptions = Omit<PaymentApiProps, 'keysSecret' | 'secretEncryptionKey' | 'alarmTopic'>;

export interface PaymentApiStackProps extends StackProps, PaymentApiOptions {
  /**
   * An existing keys secret, by name (`payment-api/keys`) or by ARN. A complete ARN ends in the 6-character
   * suffix Secrets Manager adds (`...:secret:payment-api/keys-AbCdEf`); without it the ARN is read as partial.
   * @default - a new secret holding one generated key for app `demo`
   */
  readonly existingSecret?: string;

  /**
   * ARN of the customer managed KMS key that encrypts the secret (an existing one, or the new one).
   * @default - the AWS managed key `aws/secretsmanager`
   */
  readonly secretKmsKeyArn?: string;

  /**
   * ARN of an existing standard SNS topic in the stack's Region for alarm and recovery notices (the construct's
   * `alarmTopic`). Give this or `alarmEmail`, not both.
   * @default - no topic, unless `alarmEmail` creates one
   */
  readonly alarmTopicArn?: string;
}

const SECRET_NAME_PATTERN = /^[A-Za-z0-9/_+=.@-]{1,512}$/;
const SECRET_ARN_PATTERN =
  /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/;
/** Secrets Manager appends "-" and 6 random characters to a secret's name in its ARN. */
const COMPLETE_ARN_SUFFIX = /-[A-Za-z0-9]{6}$/;
const KMS_KEY_ARN_PATTERN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/;
/** A standard topic: a FIFO topic (name ending in ".fifo") needs a message group id on every publish, which
 * CloudWatch alarms do not send. */
const TOPIC_ARN_PATTERN = /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/;

/** The payment API with its keys secret. Outputs the URL to call and the secret to put keys in. */
export class PaymentApiStack extends Stack {
  public readonly paymentApi: PaymentApi;

  constructor(scope: Construct, id: string, props: PaymentApiStackProps = {}) {
    super(scope, id, props);
    const { existingSecret, secretKmsKeyArn, alarmTopicArn, ...options } = props;

    const secretEncryptionKey = secretKmsKeyArn === undefined ? undefined : this.importKey(secretKmsKeyArn);
    const keysSecret = existingSecret === undefined ? undefined : this.importSecret(existingSecret);
    const alarmTopic = alarmTopicArn === undefined ? undefined : this.importTopic(alarmTopicArn);

    this.paymentApi = new PaymentApi(this, 'PaymentApi', {
      ...pickOptions(options),
      keysSecret,
      secretEncryptionKey,
      alarmTopic,
    });

    new CfnOutput(this, 'PaymentUrl', {
      description: 'POST here with App-id and App-key headers',
      value: this.paymentApi.paymentUrl,
    });
    new CfnOutput(this, 'KeysSecretArn', {
      description:
        'The secret holding the keys: a JSON object mapping each App-id to a key or a list of keys',
      value: this.paymentApi.secret.secretArn,
    });
  }

  private importKey(keyArn: string): kms.IKey {
    if (!KMS_KEY_ARN_PATTERN.test(keyArn)) {
      throw new Error(
        `secretKmsKeyArn must be a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>), got "${keyArn}"`,
      );
    }
    return kms.Key.fromKeyArn(this, 'KeysSecretKey', keyArn);
  }

  private importTopic(topicArn: string): sns.ITopic {
    if (!TOPIC_ARN_PATTERN.test(topicArn)) {
      throw new Error(
        `alarmTopicArn must be a standard SNS topic ARN (arn:aws:sns:<region>:<account>:<name>), got "${topicArn}"`,
      );
    }
    return sns.Topic.fromTopicArn(this, 'AlarmTopic', topicArn);
  }

  private importSecret(nameOrArn: string): secretsmanager.ISecret {
    if (nameOrArn.startsWith('arn:')) {
      if (!SECRET_ARN_PATTERN.test(nameOrArn)) {
        throw new Error(
          `existingSecret must be a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>), got "${nameOrArn}"`,
        );
      }
      return secretsmanager.Secret.fromSecretAttributes(
        this,
        'KeysSecret',
        COMPLETE_ARN_SUFFIX.test(nameOrArn)
          ? { secretCompleteArn: nameOrArn }
          : { secretPartialArn: nameOrArn },
      );
    }
    if (!SECRET_NAME_PATTERN.test(nameOrArn)) {
      throw new Error(
        `existingSecret must be a secret name (1 to 512 letters, digits or /_+=.@-) or a secret ARN, got "${nameOrArn}"`,
      );
    }
    return secretsmanager.Secret.fromSecretNameV2(this, 'KeysSecret', nameOrArn);
  }
}

/** Every option named, so a new construct prop fails to compile here until the stack passes it on. */
type AllOptions = { readonly [K in keyof Required<PaymentApiOptions>]: PaymentApiOptions[K] | undefined };

/** Only the construct's own options: StackProps stay with the stack. */
function pickOptions(props: PaymentApiOptions): AllOptions {
  return {
    keyCacheTtl: props.keyCacheTtl,
    keyMaxStale: props.keyMaxStale,
    throttlingRateLimit: props.throttlingRateLimit,
    throttlingBurstLimit: props.throttlingBurstLimit,
    stageName: props.stageName,
    logRetention: props.logRetention,
    memorySize: props.memorySize,
    logLevel: props.logLevel,
    rotation: props.rotation,
    tracing: props.tracing,
    ...pickMonitoringOptions(props),
  };
}
