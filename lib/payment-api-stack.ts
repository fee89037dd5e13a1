import { Annotations, CfnOutput, Stack, Token, type StackProps } from 'aws-cdk-lib';
import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as route53 from 'aws-cdk-lib/aws-route53';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { CERTIFICATE_ARN, DOMAIN_NAME, HOSTED_ZONE_ID, type CustomDomainOptions } from './domain';
import type { KeyRegistry } from './key-registry';
import { DEMO_APP_NEEDS_A_NEW_SECRET } from './keys-secret';
import type { MonitoringOptions } from './monitoring';
import { PaymentApi, type PaymentApiProps } from './payment-api';
import { requireFormat, type TextFormat } from './validation';

/** The construct's options that the stack passes on as they are. */
export type PaymentApiOptions = Omit<
  PaymentApiProps,
  'keysSecret' | 'secretEncryptionKey' | 'customDomain' | 'monitoring'
>;

/** The construct's monitoring options, with the alarm topic given by ARN. */
export interface StackMonitoringOptions extends Omit<MonitoringOptions, 'alarmTopic'> {
  /**
   * ARN of an existing standard SNS topic in the stack's Region for alarm and recovery notices (the construct's
   * `alarmTopic`). Give this or `alarmEmail`, not both.
   * @default - no topic, unless `alarmEmail` creates one
   */
  readonly alarmTopicArn?: string;
}

export interface PaymentApiStackProps extends StackProps, PaymentApiOptions {
  /**
   * The environment this stack serves, such as `staging` (the app's `env` context key). An environment's new
   * secret starts as an empty keyring unless `createDemoApp` says otherwise.
   * @default - none: the app's default stack
   */
  readonly environmentName?: string;

  /**
   * Whether a new secret starts with one generated key for app `demo` (see PaymentApiProps). Not with
   * `existingSecret`.
   *
   * Changing it on a deployed stack makes CloudFormation generate the secret's value again, replacing every key
   * in it. Stacks deployed before this prop existed had the demo key, environments' stacks included: such a
   * stack must set `true` to keep its keys. Left unset with `environmentName`, it is false and synth warns.
   * @default - true without `environmentName`, false with it
   */
  readonly createDemoApp?: boolean;

  /**
   * An existing keys secret, by name (`payment-api/keys`) or by ARN. A complete ARN ends in the 6-character
   * suffix Secrets Manager adds (`...:secret:payment-api/keys-AbCdEf`); without it the ARN is read as partial.
   * @default - a new secret (see `createDemoApp` for what it starts with)
   */
  readonly existingSecret?: string;

  /**
   * ARN of the customer managed KMS key that encrypts the secret (an existing one, or the new one).
   * @default - the AWS managed key `aws/secretsmanager`
   */
  readonly secretKmsKeyArn?: string;

  /** Where the metrics go, the alarm thresholds, and where alarm notices are sent. */
  readonly monitoring?: StackMonitoringOptions;

  /**
   * A custom domain for the API, such as `payments.example.com`, served at its root
   * (`https://<domainName>/payment`). Needs `certificateArn`.
   * @default - only the execute-api URL
   */
  readonly domainName?: string;

  /**
   * ARN of the ACM certificate for `domainName`, in the stack's region.
   * @default - none; required with `domainName`
   */
  readonly certificateArn?: string;

  /**
   * The Route 53 public hosted zone that holds `domainName` (or a parent of it), by id, for an alias A record.
   * Give `hostedZoneName` with it.
   * @default - no DNS record; the `CustomDomainTarget` output says where to point the name
   */
  readonly hostedZoneId?: string;

  /**
   * The name of the hosted zone `hostedZoneId`, such as `example.com`.
   * @default - none; required with `hostedZoneId`
   */
  readonly hostedZoneName?: string;
}

export const SECRET_NAME: TextFormat = {
  pattern: /^[A-Za-z0-9/_+=.@-]{1,512}$/,
  description: 'a secret name (1 to 512 letters, digits or /_+=.@-) or a secret ARN',
};
export const SECRET_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]{1,512}$/,
  description: 'a Secrets Manager secret ARN (arn:aws:secretsmanager:<region>:<account>:secret:<name>)',
};
export const KMS_KEY_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]+$/,
  description: 'a KMS key ARN (arn:aws:kms:<region>:<account>:key/<id>)',
};
/** Secrets Manager appends "-" and 6 random characters to a secret's name in its ARN. */
const COMPLETE_ARN_SUFFIX = /-[A-Za-z0-9]{6}$/;
/**
 * A standard topic: a FIFO topic (name ending in ".fifo") needs a message group id on every publish, which
 * CloudWatch alarms do not send.
 */
export const TOPIC_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[A-Za-z0-9_-]{1,256}$/,
  description: 'a standard SNS topic ARN (arn:aws:sns:<region>:<account>:<name>)',
};

/** `existingSecret` is read as an ARN when it starts with "arn:", as a name otherwise. */
export function secretReferenceFormat(nameOrArn: string): TextFormat {
  return nameOrArn.startsWith('arn:') ? SECRET_ARN : SECRET_NAME;
}

/** Checks of the stack's own props; the construct checks the rest. */
function validateStackProps(props: PaymentApiStackProps): void {
  if (props.existingSecret !== undefined && props.createDemoApp === true) {
    throw new Error(`createDemoApp cannot be used with existingSecret: ${DEMO_APP_NEEDS_A_NEW_SECRET}`);
  }
  if (props.monitoring?.alarmEmail !== undefined && props.monitoring.alarmTopicArn !== undefined) {
    throw new Error(
      'Give monitoring.alarmEmail or monitoring.alarmTopicArn, not both: subscribe the address to your topic to get notices from both',
    );
  }
}

/** Warned at synth when the stack generates a demo key (a legacy key) and refuses legacy keys. */
export const DEMO_KEY_IS_LEGACY_WARNING = 'payment-api:demoKeyIsLegacy';

/** Warned at synth on an environment's new secret when `createDemoApp` was left to its default. */
export const DEMO_APP_DEFAULT_WARNING = 'payment-api:createDemoAppDefault';

/** The payment API with its keys secret. Outputs the URL to call and the secret to put keys in. */
export class PaymentApiStack extends Stack {
  public readonly paymentApi: PaymentApi;

  constructor(scope: Construct, id: string, props: PaymentApiStackProps = {}) {
    super(scope, id, props);
    validateStackProps(props);
    const { existingSecret, secretKmsKeyArn, environmentName, monitoring = {}, ...options } = props;
    const { alarmTopicArn, ...monitoringOptions } = monitoring;

    const secretEncryptionKey = secretKmsKeyArn === undefined ? undefined : this.importKey(secretKmsKeyArn);
    const keysSecret = existingSecret === undefined ? undefined : this.importSecret(existingSecret);
    const alarmTopic = alarmTopicArn === undefined ? undefined : this.importTopic(alarmTopicArn);
    const customDomain = this.importDomain(props);
    const demoAppByDefault = keysSecret === undefined && options.createDemoApp === undefined;
    const createDemoApp = demoAppByDefault ? environmentName === undefined : options.createDemoApp;

    this.paymentApi = new PaymentApi(this, 'PaymentApi', {
      ...pickOptions(options),
      createDemoApp,
      keysSecret,
      secretEncryptionKey,
      monitoring: { ...monitoringOptions, alarmTopic },
      customDomain,
    });
    if (demoAppByDefault && environmentName !== undefined) this.warnOfEmptyKeyring(environmentName);
    if (createDemoApp === true && options.legacyKeys === false) this.warnOfLegacyDemoKey();
    this.addOutputs(props.domainName);
  }

  /**
   * The default changed under stacks deployed earlier, which had the demo key: left to it, such a stack would lose
   * every key when CloudFormation generates its secret again.
   */
  private warnOfEmptyKeyring(environmentName: string): void {
    Annotations.of(this.paymentApi.secret).addWarningV2(
      DEMO_APP_DEFAULT_WARNING,
      `The keys secret of environment "${environmentName}" starts as an empty keyring: createDemoApp is false by ` +
        'default for an environment. A stack deployed before createDemoApp existed has the demo key; turning it ' +
        "off makes CloudFormation generate the secret's value again, replacing every key in it. For such a " +
        'stack set createDemoApp=true to keep its keys. Set createDemoApp explicitly to silence this warning.',
    );
  }

  /** Secrets Manager cannot compute the key format's checksum: the demo key it generates is a legacy key. */
  private warnOfLegacyDemoKey(): void {
    Annotations.of(this.paymentApi.secret).addWarningV2(
      DEMO_KEY_IS_LEGACY_WARNING,
      'legacyKeys is false, and the demo key Secrets Manager generates has no key prefix (it cannot compute the ' +
        'checksum), so it gets 401: rotate it with the key CLI (npm run keys -- rotate demo) for a key of the format.',
    );
  }

  private addOutputs(domainName: string | undefined): void {
    new CfnOutput(this, 'PaymentUrl', {
      description: 'POST here with App-id and App-key headers',
      value: this.paymentApi.paymentUrl,
    });
    const registry = this.paymentApi.keyRegistry;
    new CfnOutput(this, 'KeysSecretArn', {
      description: registry.sharded
        ? 'Shard 0 of the key registry: a JSON object mapping each App-id whose shard is 0 to a key or a list of keys'
        : 'The secret holding the keys: a JSON object mapping each App-id to a key or a list of keys',
      value: registry.shardZero.secretArn,
    });
    new CfnOutput(this, 'KeyPrefix', {
      description:
        "This stack's keys are <prefix>_<32 base62><6 base62 CRC32>: the key CLI and the smoke tool make keys with it",
      value: this.paymentApi.keyPrefix,
    });
    if (registry.sharded) this.addRegistryOutputs(registry);
    if (this.paymentApi.secretScanning) {
      new CfnOutput(this, 'SecretScanningUrl', {
        description: "Register this URL with GitHub's secret scanning partner program (docs/operations.md)",
        value: this.paymentApi.secretScanning.url,
      });
    }
    const domain = this.paymentApi.customDomain;
    if (domain && this.paymentApi.customDomainPaymentUrl !== undefined) {
      new CfnOutput(this, 'CustomDomainUrl', {
        description: 'POST here with App-id and App-key headers: the custom domain, no stage in the path',
        value: this.paymentApi.customDomainPaymentUrl,
      });
      if (domain.aliasRecord === undefined) {
        new CfnOutput(this, 'CustomDomainTarget', {
          description: customDomainTargetDescription(domainName),
          value: domain.domain.domainNameAliasDomainName,
        });
      }
    }
  }

  /** What the key CLI's --stack and an operator need to find every shard; descriptions are literal, as CloudFormation requires. */
  private addRegistryOutputs(registry: KeyRegistry): void {
    new CfnOutput(this, 'KeyShards', {
      description:
        'How many secrets hold the keys: an app lives in shard shardOf(app id, KeyShards), docs/keys.md',
      value: String(registry.shards),
    });
    if (registry.previousShards !== undefined) {
      new CfnOutput(this, 'KeyShardsPrevious', {
        description:
          'A reshard is under way: apps not yet moved are in their shard under this count, where readers also look',
        value: String(registry.previousShards),
      });
    }
    new CfnOutput(this, 'KeyRegistry', {
      description:
        'The key registry manifest, a secret holding no key: where every shard is (key CLI --registry)',
      value: registry.manifestName ?? '',
    });
    new CfnOutput(this, 'KeyShardNamePrefix', {
      description: 'Shard i (1 and up) is the secret <prefix>shard-<i>; shard 0 is KeysSecretArn',
      value: registry.namePrefix,
    });
  }

  private importKey(keyArn: string): kms.IKey {
    requireFormat('secretKmsKeyArn', KMS_KEY_ARN, keyArn);
    return kms.Key.fromKeyArn(this, 'KeysSecretKey', keyArn);
  }

  private importTopic(topicArn: string): sns.ITopic {
    requireFormat('monitoring.alarmTopicArn', TOPIC_ARN, topicArn);
    return sns.Topic.fromTopicArn(this, 'AlarmTopic', topicArn);
  }

  private importSecret(nameOrArn: string): secretsmanager.ISecret {
    requireFormat('existingSecret', secretReferenceFormat(nameOrArn), nameOrArn);
    if (nameOrArn.startsWith('arn:')) {
      return secretsmanager.Secret.fromSecretAttributes(
        this,
        'KeysSecret',
        COMPLETE_ARN_SUFFIX.test(nameOrArn)
          ? { secretCompleteArn: nameOrArn }
          : { secretPartialArn: nameOrArn },
      );
    }
    return secretsmanager.Secret.fromSecretNameV2(this, 'KeysSecret', nameOrArn);
  }

  /** The custom domain props, imported from names and ARNs; undefined without `domainName`. */
  private importDomain(props: PaymentApiStackProps): CustomDomainOptions | undefined {
    const { domainName, certificateArn, hostedZoneId, hostedZoneName } = props;
    if ((hostedZoneId === undefined) !== (hostedZoneName === undefined)) {
      throw new Error('hostedZoneId and hostedZoneName go together: give both or neither');
    }
    if (domainName === undefined) {
      if (certificateArn !== undefined) {
        throw new Error('certificateArn needs domainName: the certificate is for the custom domain');
      }
      if (hostedZoneId !== undefined) {
        throw new Error('hostedZoneId needs domainName: the alias record is for the custom domain');
      }
      return undefined;
    }
    if (certificateArn === undefined) {
      throw new Error(
        'domainName needs certificateArn: API Gateway serves a custom domain only with its certificate',
      );
    }
    requireFormat('domainName', DOMAIN_NAME, domainName);
    requireFormat('certificateArn', CERTIFICATE_ARN, certificateArn);
    if (hostedZoneId !== undefined) requireFormat('hostedZoneId', HOSTED_ZONE_ID, hostedZoneId);
    if (hostedZoneName !== undefined) requireFormat('hostedZoneName', DOMAIN_NAME, hostedZoneName);
    return {
      domainName,
      certificate: acm.Certificate.fromCertificateArn(this, 'Certificate', certificateArn),
      hostedZone:
        hostedZoneId === undefined || hostedZoneName === undefined
          ? undefined
          : route53.HostedZone.fromHostedZoneAttributes(this, 'HostedZone', {
              hostedZoneId,
              zoneName: hostedZoneName,
            }),
    };
  }
}

/**
 * CloudFormation takes only a literal string as an output's description (a token there fails the deploy), so the
 * domain is named only when it is known at synth.
 */
function customDomainTargetDescription(domainName: string | undefined): string {
  const name = domainName === undefined || Token.isUnresolved(domainName) ? 'the custom domain' : domainName;
  return `Point ${name} here in DNS (CNAME, or a Route 53 alias A record)`;
}

/** Every option named, so a new construct prop fails to compile here until the stack passes it on. */
type AllOptions = { readonly [K in keyof Required<PaymentApiOptions>]: PaymentApiOptions[K] | undefined };

/** Only the construct's own options: StackProps stay with the stack. */
function pickOptions(props: PaymentApiOptions): AllOptions {
  return {
    keyCacheTtl: props.keyCacheTtl,
    keyMaxStale: props.keyMaxStale,
    keyExpiryWarning: props.keyExpiryWarning,
    throttlingRateLimit: props.throttlingRateLimit,
    throttlingBurstLimit: props.throttlingBurstLimit,
    stageName: props.stageName,
    logRetention: props.logRetention,
    memorySize: props.memorySize,
    keyPrefix: props.keyPrefix,
    legacyKeys: props.legacyKeys,
    logLevel: props.logLevel,
    createDemoApp: props.createDemoApp,
    rotation: props.rotation,
    tracing: props.tracing,
    waf: props.waf,
    webAclArn: props.webAclArn,
    disableExecuteApiEndpoint: props.disableExecuteApiEndpoint,
    appRateLimit: props.appRateLimit,
    keyShards: props.keyShards,
    keyShardsPrevious: props.keyShardsPrevious,
    secretScanning: props.secretScanning,
  };
}
