import { ArnFormat, NestedStack, RemovalPolicy, SecretValue, Stack, Token, type Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import {
  REGISTRY_ENV,
  registryManifestName,
  registryNamePrefix,
  secretRegistryLayout,
  serializeRegistryManifest,
  shardCountProblem,
  shardSecretName,
  shardSlots,
} from '../shared/keys/registry';
import { DEMO_APP_ID } from '../shared/keys/app-id';
import { shardOf } from '../shared/keys/shard';
import { dependOnManagedPolicy } from './bundled-function';
import { grantKeyUseThroughSecretsManager } from './grants';
import { acknowledgeNoScheduledRotation, createKeysSecret, DEMO_APP_NEEDS_A_NEW_SECRET } from './keys-secret';
import { createSecretGrantPolicies, secretArnLengthBound, type GrantedSecret } from './secret-grants';
import { requireNoProblem } from './validation';

/** The registry's settings PaymentApi exposes as its own props. */
export interface KeyRegistryOptions {
  /**
   * How many secrets the keys are spread over (the key registry's shards), 1 to 1,024. An app lives in shard
   * shardOf(appId, keyShards) (shared/keys/shard.ts). Shard 0 is the keys secret (`keysSecret`, or the one the
   * stack creates); the stack creates shards 1 to keyShards - 1 as `payment-api/<stack name>/keys/shard-<i>`,
   * starting as `{}`, encrypted like shard 0 and retained on stack deletion. With 1, the stack is exactly what it
   * was before shards existed. To change the count of a deployed stack, set `keyShardsPrevious` too.
   * @default 1
   */
  readonly keyShards?: number;

  /**
   * While a reshard is under way: the count apps were placed by before (1 to 1,024, not keyShards). Readers look for
   * an app in its home under keyShards first, then under keyShardsPrevious, so none is missed while the key CLI's
   * `reshard` moves apps; the stack keeps every shard either count uses. Leave it out once the reshard is done.
   * @default - no reshard under way
   */
  readonly keyShardsPrevious?: number;
}

export const KEY_REGISTRY_DEFAULTS = { keyShards: 1 } as const satisfies Partial<
  Record<keyof KeyRegistryOptions, unknown>
>;

/** Why `keyShardsPrevious` is refused next to `keyShards`, phrased to follow its name; undefined when valid. */
export function previousShardsProblem(previous: number, shards: number): string | undefined {
  return (
    shardCountProblem(previous) ??
    (previous === shards
      ? `must differ from keyShards (${shards}): set it only while a reshard is under way, to the count apps were placed by before`
      : undefined)
  );
}

/** Throws on the first invalid option, in the words the CDK app's context uses. */
export function validateKeyRegistryOptions(options: KeyRegistryOptions): void {
  const shards = options.keyShards ?? KEY_REGISTRY_DEFAULTS.keyShards;
  if (options.keyShards !== undefined) requireNoProblem('keyShards', shardCountProblem, options.keyShards);
  if (options.keyShardsPrevious !== undefined) {
    requireNoProblem(
      'keyShardsPrevious',
      (previous) => previousShardsProblem(previous, shards),
      options.keyShardsPrevious,
    );
  }
  for (const [name, value] of [
    ['keyShards', options.keyShards],
    ['keyShardsPrevious', options.keyShardsPrevious],
  ] as const) {
    if (value !== undefined && Token.isUnresolved(value)) {
      throw new Error(`${name} must be known at synth: the stack creates one secret per shard`);
    }
  }
}

export interface KeyRegistryProps extends KeyRegistryOptions {
  /**
   * An existing keys secret to use as shard 0, as it is.
   * @default - a new secret, retained when the stack is deleted
   */
  readonly existingSecret?: secretsmanager.ISecret;
  /**
   * The customer managed KMS key that encrypts the shards the stack creates; readers may decrypt with it through
   * Secrets Manager only.
   * @default - the AWS managed key `aws/secretsmanager`, and no KMS permission is granted
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * Whether a new shard 0 starts with a generated key for app `demo` (see KeysSecretProps). Not with
   * `existingSecret`.
   * @default true
   */
  readonly createDemoApp?: boolean;
  /**
   * Whether every shard is rotated on a schedule (KeyRotation); without it, cdk-nag's finding that a shard has no
   * scheduled rotation is acknowledged on each shard the stack creates.
   * @default false
   */
  readonly scheduledRotation?: boolean;
  /** The payment Lambda's key cache TTL: the manifest tells the key CLI's reshard how long readers may hold a copy. */
  readonly keyCacheTtl: Duration;
}

/**
 * Shards up to this index - 1 are in the stack itself, as they always were; the ones from it up go into nested stacks
 * of this many (`ShardBlock1` holds 256 to 511, and so on), so 1,024 shards stay within CloudFormation's 500 resources
 * per stack. Fixed by index: growing the registry never moves a shard, which would mean a new secret of the same name.
 */
export const SHARDS_PER_BLOCK = 256;

/**
 * Up to this many shards, every grant names each shard's ARN, in managed policies sized to IAM's limits (as before
 * larger registries); past it, 1,023 ARNs would need 19 managed policies where a role may have 10, so the grant is
 * on the stack's own shard name prefix, `payment-api/<stack>/keys/shard-*`: still only this stack's shards.
 */
export const GRANTS_BY_ARN_UP_TO = 256;

/** What a reader of every shard is allowed: the value only. */
const READ_ACTIONS = ['secretsmanager:GetSecretValue'] as const;
/** The four calls a rotation makes on the secret it rotates. */
const ROTATION_ACTIONS = [
  'secretsmanager:DescribeSecret',
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
  'secretsmanager:UpdateSecretVersionStage',
] as const;

/**
 * What a function that ends leaked keys may do on every shard (the secret scanning function): read a shard's value and
 * write a new version with compare-and-swap (a staged PutSecretValue, then moving AWSCURRENT with
 * RemoveFromVersionId). Not DescribeSecret, rotation or deletion.
 */
const READ_WRITE_ACTIONS = [
  'secretsmanager:GetSecretValue',
  'secretsmanager:PutSecretValue',
  'secretsmanager:UpdateSecretVersionStage',
] as const;

/**
 * cdk-nag finds a secret's rotation schedule by reference; a shard from 256 on is named by its schedule, in another
 * nested stack (KeyRotation), so the finding is acknowledged with where the schedule is.
 */
function acknowledgeRotationByName(secret: secretsmanager.Secret): void {
  NagSuppressions.addResourceSuppressions(secret, [
    {
      id: 'AwsSolutions-SMG4',
      reason:
        'Rotated on a schedule (the rotation prop): its CfnRotationSchedule, in a nested stack of KeyRotation, names ' +
        'the shard by its fixed name rather than by a reference across nested stacks.',
    },
  ]);
}

/**
 * The key registry: the secrets that hold the keys (its shards), what the functions that read it are told (their
 * environment) and allowed (read, or rotate), and, when there is more than one shard, the manifest the key CLI
 * reads. Made in PaymentApi as `KeysSecret`, so shard 0 keeps the logical ID the single keys secret always had.
 *
 * Shards 1 and up have fixed names, `payment-api/<stack name>/keys/shard-<i>`: the Lambda finds 256 shards from a
 * prefix and a count, where 256 ARNs would not fit in its 4 KB of environment variables. Their grants name each
 * ARN, in managed policies sized to IAM's limits (lib/secret-grants.ts); shard 0's stay where they always were, in
 * each function's default policy.
 */
export class KeyRegistry extends Construct {
  /** Shard 0: the keys secret created here, or the one passed in. */
  public readonly shardZero: secretsmanager.ISecret;
  /** Every shard either count uses, by index: shard 0 first. */
  public readonly shardSecrets: readonly secretsmanager.ISecret[];
  /** Apps are placed by shardOf(appId, shards). */
  public readonly shards: number;
  /** While a reshard is under way, the count apps were placed by before. */
  public readonly previousShards?: number;
  /** Whether there is more than one shard, or a reshard under way: the stack then writes the manifest. */
  public readonly sharded: boolean;
  /** `payment-api/<stack name>/keys/`: the names of shards 1 and up, and of the manifest, start with it. */
  public readonly namePrefix: string;
  /** The manifest secret, `<namePrefix>registry`, when sharded: where the key CLI finds every shard in one call. */
  public readonly manifest?: secretsmanager.Secret;
  /** The manifest's name, when sharded. */
  public readonly manifestName?: string;
  /** What every function that reads the registry gets (REGISTRY_ENV): only KEYS_SECRET_ID on one shard. */
  public readonly environment: Readonly<Record<string, string>>;
  /** The key that encrypts the shards, when it is a customer managed key. */
  public readonly encryptionKey?: kms.IKey;
  /**
   * Demo's home shard, when the stack generates a demo key (in shard 0, always: see DemoKeyHome) and demo lives in
   * another shard under `shards`: the key must be copied there when the stack is created.
   */
  public readonly demoHomeOutsideShardZero?: secretsmanager.ISecret;

  private readonly shardsOneUp: readonly GrantedSecret[];
  /** The nested stacks holding shards 256 and up, by block (1 for 256 to 511, ...). */
  private readonly shardBlocks = new Map<number, NestedStack>();
  private readPolicies?: iam.ManagedPolicy[];
  private rotationPolicies?: iam.ManagedPolicy[];
  private readWritePolicies?: iam.ManagedPolicy[];

  constructor(scope: Construct, id: string, props: KeyRegistryProps) {
    super(scope, id);
    validateKeyRegistryOptions(props);
    if (props.existingSecret !== undefined && props.createDemoApp === true) {
      throw new Error(`createDemoApp cannot be used with existingSecret: ${DEMO_APP_NEEDS_A_NEW_SECRET}`);
    }
    this.shards = props.keyShards ?? KEY_REGISTRY_DEFAULTS.keyShards;
    this.previousShards = props.keyShardsPrevious;
    this.sharded = this.shards > 1 || this.previousShards !== undefined;
    this.encryptionKey = props.encryptionKey;
    this.namePrefix = registryNamePrefix(Stack.of(this).stackName);

    this.shardZero =
      props.existingSecret ??
      createKeysSecret(this, {
        encryptionKey: props.encryptionKey,
        createDemoApp: props.createDemoApp,
        scheduledRotation: props.scheduledRotation,
      });
    const created = this.createShards(props);
    this.shardSecrets = [this.shardZero, ...created];
    const demoHome = shardOf(DEMO_APP_ID, this.shards);
    if (props.existingSecret === undefined && (props.createDemoApp ?? true) && demoHome !== 0) {
      this.demoHomeOutsideShardZero = this.shardSecrets[demoHome];
    }
    this.shardsOneUp = created.map((secret, index) => ({
      arn: secret.secretArn,
      arnLengthBound: secretArnLengthBound(shardSecretName(this.namePrefix, index + 1)),
    }));

    const layout = secretRegistryLayout({
      shardZeroId: this.shardZero.secretArn,
      namePrefix: this.namePrefix,
      shards: this.shards,
      ...(this.previousShards === undefined ? {} : { previousShards: this.previousShards }),
    });
    if (this.sharded) {
      this.manifestName = registryManifestName(this.namePrefix);
      this.manifest = this.createManifest(
        this.manifestName,
        serializeRegistryManifest({ ...layout, keyCacheTtlSeconds: props.keyCacheTtl.toSeconds() }),
      );
    }
    this.environment = {
      [REGISTRY_ENV.shardZero]: this.shardZero.secretArn,
      ...(this.sharded && {
        [REGISTRY_ENV.shards]: String(this.shards),
        ...(this.previousShards !== undefined && {
          [REGISTRY_ENV.previousShards]: String(this.previousShards),
        }),
        [REGISTRY_ENV.namePrefix]: this.namePrefix,
      }),
    };
  }

  /** Every index either count uses: max(shards, previousShards). */
  public get slots(): number {
    return this.shardSecrets.length;
  }

  /**
   * Lets `fn` read every shard's value: shard 0 as the single secret always was (its default policy), the others
   * through managed policies shared by every reader; with a customer key, `kms:Decrypt` through Secrets Manager.
   */
  public grantRead(fn: lambda.Function): void {
    this.shardZero.grantRead(fn);
    if (this.encryptionKey) grantKeyUseThroughSecretsManager(fn, this.encryptionKey, ['kms:Decrypt']);
    this.readPolicies ??= this.createShardPolicies('ReadShards', READ_ACTIONS, 'read the values of');
    this.attach(fn, this.readPolicies);
  }

  /**
   * Lets `fn` rotate every shard: the four calls a rotation makes, on shard 0 in its default policy (a secret known
   * by name has a partial ARN: the grant covers the 6-character suffix Secrets Manager adds, as `grantRead` does),
   * on the others through managed policies; with a customer key, decrypting a version and writing one.
   */
  public grantRotation(fn: lambda.Function): void {
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: [...ROTATION_ACTIONS],
      resourceArns: [this.shardZero.secretFullArn ?? `${this.shardZero.secretArn}-??????`],
    });
    if (this.encryptionKey) {
      grantKeyUseThroughSecretsManager(fn, this.encryptionKey, ['kms:Decrypt', 'kms:GenerateDataKey']);
    }
    this.rotationPolicies ??= this.createShardPolicies('RotateShards', ROTATION_ACTIONS, 'rotate');
    this.attach(fn, this.rotationPolicies);
  }

  /**
   * Lets `fn` read every shard's value and write a new version of it with compare-and-swap (READ_WRITE_ACTIONS): on
   * shard 0 in its default policy (its complete ARN, or the partial one with the suffix Secrets Manager adds), on the
   * others through managed policies of one statement each, so a role needs as many as for reading alone; with a
   * customer key, decrypting a version and writing one, through Secrets Manager only.
   */
  public grantReadWrite(fn: lambda.Function): void {
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: [...READ_WRITE_ACTIONS],
      resourceArns: [this.shardZero.secretFullArn ?? `${this.shardZero.secretArn}-??????`],
    });
    if (this.encryptionKey) {
      grantKeyUseThroughSecretsManager(fn, this.encryptionKey, ['kms:Decrypt', 'kms:GenerateDataKey']);
    }
    this.readWritePolicies ??= this.createShardPolicies(
      'ReadWriteShards',
      READ_WRITE_ACTIONS,
      'read and write (compare-and-swap) the values of',
    );
    this.attach(fn, this.readWritePolicies);
  }

  /**
   * The managed policies that hold the read or rotation grants on shards 1 and up (none until a grant made them):
   * what must exist before anything that relies on them runs, such as a schedule's first rotation.
   */
  public policiesOf(kind: 'read' | 'rotation'): readonly iam.ManagedPolicy[] {
    return (kind === 'read' ? this.readPolicies : this.rotationPolicies) ?? [];
  }

  private createShards(props: KeyRegistryProps): secretsmanager.Secret[] {
    const slots = shardSlots({
      shards: this.shards,
      ...(this.previousShards === undefined ? {} : { previousShards: this.previousShards }),
    });
    return Array.from({ length: slots - 1 }, (_, offset) => {
      const index = offset + 1;
      const secret = new secretsmanager.Secret(this.scopeOfShard(index), `Shard${index}`, {
        secretName: shardSecretName(this.namePrefix, index),
        description: `payment-api keys, shard ${index} of the key registry: a JSON object mapping each App-id to a key or a list of keys`,
        encryptionKey: props.encryptionKey,
        // An empty keyring holds no key, and a constant value is never written again by a later deploy.
        secretStringValue: SecretValue.unsafePlainText('{}'),
        // It holds the only copy of its apps' keys.
        removalPolicy: RemovalPolicy.RETAIN,
      });
      if (props.scheduledRotation !== true) acknowledgeNoScheduledRotation(secret);
      else if (index >= SHARDS_PER_BLOCK) acknowledgeRotationByName(secret);
      return secret;
    });
  }

  /** Where shard `index` is made: this construct up to 255, a nested stack of its block from 256 on. */
  private scopeOfShard(index: number): Construct {
    if (index < SHARDS_PER_BLOCK) return this;
    const block = Math.floor(index / SHARDS_PER_BLOCK);
    let nested = this.shardBlocks.get(block);
    if (nested === undefined) {
      const first = block * SHARDS_PER_BLOCK;
      nested = new NestedStack(this, `ShardBlock${block}`, {
        description: `payment-api: key registry shards ${first} to ${first + SHARDS_PER_BLOCK - 1}`,
      });
      this.shardBlocks.set(block, nested);
    }
    return nested;
  }

  /**
   * A shard's id for a resource that names it: its ARN up to shard 255, its name from 256 on (a reference across
   * nested stacks would cost an output per shard, past CloudFormation's 200), with the nested stack that must exist
   * first.
   */
  public shardReference(index: number): { readonly secretId: string; readonly madeIn?: NestedStack } {
    const secret = this.shardSecrets[index];
    if (secret === undefined) throw new Error(`the key registry has no shard ${index}`);
    if (index < SHARDS_PER_BLOCK) return { secretId: secret.secretArn };
    const madeIn = this.shardBlocks.get(Math.floor(index / SHARDS_PER_BLOCK));
    return { secretId: shardSecretName(this.namePrefix, index), ...(madeIn === undefined ? {} : { madeIn }) };
  }

  /**
   * The manifest holds where the shards are and no key, so its value is written in the template, as plain text
   * (which the checkSecretUsage flag allows only through SecretValue.unsafePlainText, an explicit choice). It is
   * written again whenever the layout changes, and deleted with the stack (CloudFormation deletes a secret at
   * once, so the name is free for the stack's next creation).
   */
  private createManifest(name: string, text: string): secretsmanager.Secret {
    const manifest = new secretsmanager.Secret(this, 'Registry', {
      secretName: name,
      description:
        'payment-api key registry manifest: where the key shards are (no key in it), written by the stack at each deploy',
      encryptionKey: this.encryptionKey,
      secretStringValue: SecretValue.unsafePlainText(text),
      removalPolicy: RemovalPolicy.DESTROY,
    });
    NagSuppressions.addResourceSuppressions(manifest, [
      {
        id: 'AwsSolutions-SMG4',
        reason:
          'The manifest holds no key or credential, only where the key shards are; the stack writes it from its ' +
          'own settings at each deploy, so there is nothing to rotate.',
      },
    ]);
    return manifest;
  }

  private createShardPolicies(
    idPrefix: string,
    actions: readonly string[],
    verb: string,
  ): iam.ManagedPolicy[] {
    if (this.shardsOneUp.length === 0) return [];
    if (this.slots > GRANTS_BY_ARN_UP_TO) return [this.createPrefixPolicy(idPrefix, actions, verb)];
    return createSecretGrantPolicies(this, idPrefix, {
      description: `payment-api: ${verb} key registry shards 1 to ${this.shardsOneUp.length}, one ARN each`,
      actions,
      secrets: this.shardsOneUp,
    });
  }

  /** One statement on every secret named `<namePrefix>shard-*`: this stack's shards, whatever their number. */
  private createPrefixPolicy(idPrefix: string, actions: readonly string[], verb: string): iam.ManagedPolicy {
    const shardsByName = Stack.of(this).formatArn({
      service: 'secretsmanager',
      resource: 'secret',
      resourceName: `${shardSecretName(this.namePrefix, 0).replace(/0$/, '')}*`,
      arnFormat: ArnFormat.COLON_RESOURCE_NAME,
    });
    const policy = new iam.ManagedPolicy(this, `${idPrefix}ByName`, {
      description: `payment-api: ${verb} key registry shards 1 to ${this.shardsOneUp.length}, by their name prefix`,
      statements: [new iam.PolicyStatement({ actions: [...actions], resources: [shardsByName] })],
    });
    NagSuppressions.addResourceSuppressions(policy, [
      {
        id: 'AwsSolutions-IAM5',
        reason:
          `Past ${GRANTS_BY_ARN_UP_TO} shards one ARN each would need more managed policies than a role may have; ` +
          'the grant is on the shards of this stack only, by their fixed name prefix payment-api/<stack>/keys/shard-, ' +
          'which no other stack and not the manifest shares.',
        appliesTo: [
          {
            regex:
              '/^Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:payment-api\\/.*\\/keys\\/shard-\\*$/g',
          },
        ],
      },
    ]);
    return policy;
  }

  private attach(fn: lambda.Function, policies: readonly iam.ManagedPolicy[]): void {
    const role = fn.role;
    if (policies.length > 0 && !(role instanceof iam.Role)) {
      throw new Error('A function that reads the key registry needs a role of its own');
    }
    for (const policy of policies) {
      if (role instanceof iam.Role) policy.attachToRole(role);
      dependOnManagedPolicy(fn, policy);
    }
  }
}
