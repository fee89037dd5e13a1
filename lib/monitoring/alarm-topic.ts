import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type { Construct } from 'constructs';

export interface AlarmTopicProps {
  /** The address subscribed to the notices; it must confirm the subscription from the email AWS sends. */
  readonly email: string;
  /** Named in the key's description, so the key is recognisable among the account's keys. */
  readonly serviceName: string;
}

/**
 * An SNS topic for alarm and recovery notices with `email` subscribed, created in `scope` as `AlarmTopic` with its
 * KMS key `AlarmTopicKey`.
 *
 * Encrypted with a key of its own: CloudWatch cannot publish to a topic under the AWS managed `aws/sns` key,
 * whose policy cannot be changed. The topic policy replaces SNS's default one (which let the account publish),
 * so it must name CloudWatch alarms explicitly.
 */
export function createAlarmTopic(scope: Construct, { email, serviceName }: AlarmTopicProps): sns.Topic {
  const { partition, region, account } = Stack.of(scope);
  const cloudWatch = new iam.ServicePrincipal('cloudwatch.amazonaws.com');

  const key = new kms.Key(scope, 'AlarmTopicKey', {
    description: `${serviceName} alarm notices: encrypts the alarm topic`,
    enableKeyRotation: true,
    // It only protects notices in flight: nothing stays encrypted under it once the stack is gone.
    removalPolicy: RemovalPolicy.DESTROY,
    pendingWindow: Duration.days(7),
  });
  // As the SNS guide's statement for AWS service publishers: CloudWatch makes the data key for each notice.
  key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsEncryptNotices',
      principals: [cloudWatch],
      actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
      resources: ['*'],
    }),
  );

  const topic = new sns.Topic(scope, 'AlarmTopic', { masterKey: key, enforceSSL: true });
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'CloudWatchAlarmsOfThisAccountPublish',
      principals: [cloudWatch],
      actions: ['sns:Publish'],
      resources: [topic.topicArn],
      conditions: {
        ArnLike: { 'aws:SourceArn': `arn:${partition}:cloudwatch:${region}:${account}:alarm:*` },
      },
    }),
  );
  topic.addSubscription(new subscriptions.EmailSubscription(email));
  return topic;
}
