import { Duration, Stack } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
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
import { grantKeyUseThroughSecretsManager, type KeysSecretAccess } from './grants';
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

/** The secret to rotate, and its key. */
export interface KeyRotationProps extends KeyRotationOptions, KeysSecretAccess {
  /** Retention of the rotation function's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Lowest level the rotation function logs. */
  readonly logLevel: LogLevel;
}

/**
 * Scheduled rotation of the keys secret by a Lambda of its own (lambda/rotation). Built from the L1 schedule
 * rather than `secret.addRotationSchedule` so the function gets exactly what it calls: the four rotation actions
 * on this one secret, and not `secretsmanager:GetRandomPassword` on `*` (it makes its keys itself).
 */
export class KeyRotation extends Construct {
  public readonly handler: NodejsFunction;
  public readonly schedule: secretsmanager.CfnRotationSchedule;

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
      },
    });
    this.grantRotation(props.secret, props.encryptionKey);

    const invoke = this.allowSecretsManagerInvoke();
    this.schedule = new secretsmanager.CfnRotationSchedule(this, 'Schedule', {
      secretId: props.secret.secretArn,
      rotationLambdaArn: this.handler.functionArn,
      rotationRules: { scheduleExpression: Schedule.rate(props.every).expressionString },
    });
    // Secrets Manager checks that it may invoke the function when the schedule is created, and rotates at once.
    this.schedule.addResourceDependency(invoke);
  }

  /**
   * The four calls a rotation makes, on this secret only. A secret known by name has a partial ARN: the grant
   * covers the 6-character suffix Secrets Manager adds, as `grantRead` does.
   */
  private grantRotation(secret: secretsmanager.ISecret, encryptionKey: kms.IKey | undefined): void {
    iam.Grant.addToPrincipal({
      grantee: this.handler,
      actions: [
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'secretsmanager:PutSecretValue',
        'secretsmanager:UpdateSecretVersionStage',
      ],
      resourceArns: [secret.secretFullArn ?? `${secret.secretArn}-??????`],
    });
    // Reading a version decrypts; writing one has Secrets Manager generate a data key.
    if (encryptionKey) {
      grantKeyUseThroughSecretsManager(this.handler, encryptionKey, ['kms:Decrypt', 'kms:GenerateDataKey']);
    }
  }

  /**
   * Secrets Manager may invoke the function on behalf of this account only (confused deputy protection, as the
   * Secrets Manager guide recommends); the function's role limits it to the one secret.
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
