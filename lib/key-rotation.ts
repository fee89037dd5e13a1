import { Duration, NestedStack, Stack } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { MAX_KEYS_KEPT_BY_ROTATION, MIN_KEYS_KEPT_BY_ROTATION } from '../shared/keys/rotation';
import {
  DEFAULT_ROTATION_KEEP_KEYS,
  MAX_CALLS_PER_ROTATION_STEP,
  ROTATION_CALL_BOUNDS,
  ROTATION_ENV,
} from '../lambda/rotation/settings';
import type { LogLevel } from '../shared/logger';
import { createBundledFunction, lambdaEntry } from './bundled-function';
import type { KeyRegistry } from './key-registry';
import { requireWholeDuration, requireWholeNumber, type WholeNumberRange } from './validation';

/**
 * Secrets Manager's native rotation of the keys secret: each rotation adds a fresh key to every app and gives its
 * other keys an expiry (superseded keys end by date, not by count: see shared/keys/rotation.ts).
 */
export interface KeyRotationOptions {
  /**
   * Time between two rotations: a whole number of hours from 4 hours to 1000 days (Secrets Manager's range).
   */
  readonly every: Duration;

  /**
   * Keys valid right after a rotation, the fresh one included: each rotation sets every other key of an app to
   * expire `keep - 1` periods later (or keeps an earlier expiry), so with 2 the previous key stays valid for one
   * more period. A whole number from 2 to 10.
   * @default 2
   */
  readonly keep?: number;
}

export const KEY_ROTATION_DEFAULTS = {
  keep: DEFAULT_ROTATION_KEEP_KEYS,
} as const satisfies Partial<Record<keyof KeyRotationOptions, unknown>>;

/** Secrets Manager's range for a rotation period (4 hours to 1000 days, counted in hours), and the keys kept. */
export const KEY_ROTATION_LIMITS = {
  everyHours: { min: 4, max: 24_000, unit: 'hours' },
  keep: { min: MIN_KEYS_KEPT_BY_ROTATION, max: MAX_KEYS_KEPT_BY_ROTATION },
} as const satisfies Record<string, WholeNumberRange>;

/**
 * Every Secrets Manager call of a step ends by its deadline, and a step makes at most MAX_CALLS_PER_ROTATION_STEP
 * calls: the time-out covers that worst case with room to spare. Steps are idempotent, so a time-out is retried
 * safely anyway.
 */
export const ROTATION_TIMEOUT = Duration.seconds(60);

/** A step's worst case: every one of its calls runs to its deadline (a test keeps it under ROTATION_TIMEOUT). */
export const ROTATION_STEP_WORST_CASE_MS = MAX_CALLS_PER_ROTATION_STEP * ROTATION_CALL_BOUNDS.callDeadlineMs;
const ROTATION_MEMORY_MIB = 256;

/** Throws on the first invalid option. */
export function validateKeyRotationOptions(options: KeyRotationOptions): void {
  requireWholeDuration('rotation.every', KEY_ROTATION_LIMITS.everyHours, options.every);
  if (options.keep !== undefined) requireWholeNumber('rotation.keep', KEY_ROTATION_LIMITS.keep, options.keep);
}

/** The registry whose shards are rotated. */
export interface KeyRotationProps extends KeyRotationOptions {
  /** Every shard gets a schedule on the one rotation function, which may rotate exactly the shards. */
  readonly registry: KeyRegistry;
  /** Retention of the rotation function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Lowest level the rotation function logs. */
  readonly logLevel: LogLevel;
  /** The stack's key prefix: fresh keys are made with it (PaymentFunctionOptions.keyPrefix). */
  readonly keyPrefix: string;
}

/**
 * Rotation schedules of shards 1 and up go into nested stacks of this many, so that a stack of 256 shards with
 * rotation (255 secrets and 256 schedules) stays within CloudFormation's 500 resources per stack. The blocks are
 * fixed by shard index (1 to 63, 64 to 127, ...), so growing the registry never moves a schedule.
 */
export const SCHEDULES_PER_NESTED_STACK = 64;

/** The rotation schedules of one block of shards, in a nested stack of their own. */
class ShardRotationSchedules extends NestedStack {
  constructor(
    scope: Construct,
    id: string,
    props: {
      readonly shards: readonly { readonly index: number; readonly secretId: string }[];
      readonly rotationLambdaArn: string;
      readonly scheduleExpression: string;
    },
  ) {
    const first = props.shards[0]?.index ?? 0;
    const last = props.shards[props.shards.length - 1]?.index ?? 0;
    super(scope, id, { description: `payment-api: scheduled rotation of key shards ${first} to ${last}` });
    for (const { index, secretId } of props.shards) {
      new secretsmanager.CfnRotationSchedule(this, `Shard${index}`, {
        secretId,
        rotationLambdaArn: props.rotationLambdaArn,
        rotationRules: { scheduleExpression: props.scheduleExpression },
      });
    }
  }
}

/**
 * Scheduled rotation of every shard of the key registry by one Lambda (lambda/rotation): Secrets Manager invokes it
 * with one shard's ARN per rotation, and each rotation writes one version of that shard only. Built from the L1
 * schedule rather than `secret.addRotationSchedule` so the function gets exactly what it calls: the four rotation
 * actions on the shards, and not `secretsmanager:GetRandomPassword` on `*` (it makes its keys itself).
 *
 * Shard 0's schedule is `Schedule`, where the single secret's always was; the others are in nested stacks
 * (`ShardSchedules<block>`), each created only once the function may rotate its shards.
 */
export class KeyRotation extends Construct {
  public readonly handler: NodejsFunction;
  /** Shard 0's schedule. */
  public readonly schedule: secretsmanager.CfnRotationSchedule;
  /** The nested stacks holding the schedules of shards 1 and up, by block. */
  public readonly shardSchedules: readonly NestedStack[];

  constructor(scope: Construct, id: string, props: KeyRotationProps) {
    super(scope, id);
    validateKeyRotationOptions(props);

    this.handler = createBundledFunction(this, 'Function', {
      entry: lambdaEntry('rotation', 'index.ts'),
      description:
        'payment-api: rotates the keys secret, adding a fresh key to every app and expiring the ones it supersedes',
      roleDescription: 'payment-api key rotation: writes its own log group and rotates the keys secret',
      memorySize: ROTATION_MEMORY_MIB,
      timeout: ROTATION_TIMEOUT,
      logRetention: props.logRetention,
      environment: {
        [ROTATION_ENV.keepKeys]: String(props.keep ?? KEY_ROTATION_DEFAULTS.keep),
        // Superseded keys expire a number of periods after a rotation: the function needs the period itself.
        [ROTATION_ENV.periodHours]: String(props.every.toHours()),
        [ROTATION_ENV.logLevel]: props.logLevel,
        [ROTATION_ENV.keyPrefix]: props.keyPrefix,
      },
    });
    props.registry.grantRotation(this.handler);

    const invoke = this.allowSecretsManagerInvoke();
    const scheduleExpression = Schedule.rate(props.every).expressionString;
    this.schedule = new secretsmanager.CfnRotationSchedule(this, 'Schedule', {
      secretId: props.registry.shardZero.secretArn,
      rotationLambdaArn: this.handler.functionArn,
      rotationRules: { scheduleExpression },
    });
    // Secrets Manager checks that it may invoke the function when the schedule is created, and rotates at once.
    this.schedule.addResourceDependency(invoke);

    const policies = props.registry
      .policiesOf('rotation')
      .map((policy) => policy.node.defaultChild as iam.CfnManagedPolicy);
    const shards = props.registry.shardSecrets
      .map((_, index) => ({ index, ...props.registry.shardReference(index) }))
      .slice(1);
    const blocks = new Map<number, typeof shards>();
    for (const shard of shards) {
      const block = Math.floor(shard.index / SCHEDULES_PER_NESTED_STACK);
      blocks.set(block, [...(blocks.get(block) ?? []), shard]);
    }
    this.shardSchedules = [...blocks].map(([block, members]) => {
      const nested = new ShardRotationSchedules(this, `ShardSchedules${block}`, {
        shards: members,
        rotationLambdaArn: this.handler.functionArn,
        scheduleExpression,
      });
      // The first rotation runs as each schedule is created: the function must already be allowed to run it.
      for (const first of [invoke, ...policies]) nested.nestedStackResource?.addResourceDependency(first);
      // Shards from 256 on are named, not referenced: their nested stack must exist first.
      for (const madeIn of new Set(members.flatMap(({ madeIn }) => (madeIn === undefined ? [] : [madeIn])))) {
        nested.addStackDependency(madeIn);
      }
      return nested;
    });
  }
  /**
   * Secrets Manager may invoke the function on behalf of this account only (confused deputy protection, as the
   * Secrets Manager guide recommends); the function's role limits it to the registry's shards.
   */
  private allowSecretsManagerInvoke(): lambda.CfnPermission {
    const id = 'SecretsManagerInvoke';
    this.handler.addPermission(id, {
      principal: new iam.ServicePrincipal('secretsmanager.amazonaws.com'),
      action: 'lambda:InvokeFunction',
      sourceAccount: Stack.of(this).account,
    });
    const permission = this.handler.permissionsNode.tryFindChild(id);
    if (!(permission instanceof lambda.CfnPermission)) {
      throw new Error('The rotation function has no invoke permission to depend on');
    }
    return permission;
  }
}
