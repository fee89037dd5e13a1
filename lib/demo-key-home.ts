import { CustomResource, Duration } from 'aws-cdk-lib';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { createBundledFunction, lambdaEntry } from './bundled-function';

export interface DemoKeyHomeProps {
  /** Shard 0: the new keys secret, where Secrets Manager generates the demo key. */
  readonly shardZero: secretsmanager.ISecret;
  /** Demo's home shard under the stack's shard count (shardOf('demo', keyShards)), not shard 0. */
  readonly home: secretsmanager.ISecret;
  /** Retention of the function's log group. */
  readonly logRetention: logs.RetentionDays;
}

/**
 * Puts the generated demo key in demo's home shard when a stack is created with a shard count that places `demo`
 * outside shard 0 (20 shards and up), so a new stack answers 200 to the README's own call whatever `keyShards` is.
 *
 * Not by generating the key in the home shard: CloudFormation writes a secret's value again whenever its generation
 * settings change, and demo's home changes with the shard count (19, then 157, 188 and 950), so a later reshard would
 * wipe a shard full of keys. A custom resource acts once instead, at its Create: it copies shard 0's generated demo
 * key into the home shard while that is still the `{}` the stack wrote (lambda/demo-key). Its Update (a new count)
 * and Delete do nothing: moving apps is the key CLI's `reshard`.
 */
export class DemoKeyHome extends Construct {
  constructor(scope: Construct, id: string, props: DemoKeyHomeProps) {
    super(scope, id);
    const fn = createBundledFunction(this, 'Function', {
      entry: lambdaEntry('demo-key', 'index.ts'),
      description:
        "payment-api: copies the generated demo key into demo's home shard when the stack is created",
      roleDescription: "payment-api demo key placement: reads shard 0 and writes demo's home shard, once",
      memorySize: 256,
      timeout: Duration.seconds(30),
      logRetention: props.logRetention,
      environment: {},
    });
    props.shardZero.grantRead(fn);
    props.home.grantRead(fn);
    props.home.grantWrite(fn);

    // After the function, through its ARN, and so after its policy, on which the function depends.
    new CustomResource(this, 'Placement', {
      serviceToken: fn.functionArn,
      resourceType: 'Custom::PaymentApiDemoKeyHome',
      properties: { ShardZero: props.shardZero.secretArn, Home: props.home.secretArn },
    });
  }
}
