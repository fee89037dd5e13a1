import * as path from 'node:path';
import { Lazy, type CfnResource, type Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';

/** The bundle's esbuild target follows the runtime. */
const RUNTIME = lambda.Runtime.NODEJS_24_X;
const BUNDLE_TARGET = 'node24';

const PROJECT_ROOT = path.join(__dirname, '..');

/**
 * What makes the SDK-based Lambda bundles (the rotation function and the key registry monitor) small and quick to
 * load: packages resolved module-first, so esbuild tree-shakes their ESM builds (the CommonJS builds are single files
 * it must keep whole), the SDK's default credential chain replaced by the environment provider, all a Lambda ever
 * uses (lambda/lambda-credentials.ts), and the event stream codec, which no operation of theirs uses, by a stub that
 * says so (lambda/no-event-streams.ts). The payment Lambda's bundles hold no SDK code at all (its small client,
 * shared/aws/aws-json-client.ts), so the aliases never apply there.
 */
export const SLIM_BUNDLING = {
  mainFields: ['module', 'main'],
  aliases: {
    '@aws-sdk/credential-provider-node': './lambda/lambda-credentials.ts',
    '@smithy/core/event-streams': './lambda/no-event-streams.ts',
  },
} as const;

/** A Lambda entry point of this project, by its path under `lambda/`. */
export function lambdaEntry(...segments: string[]): string {
  return path.join(PROJECT_ROOT, 'lambda', ...segments);
}

export interface BundledFunctionOptions {
  /** The TypeScript file that exports `handler`. */
  readonly entry: string;
  readonly description: string;
  /** Says what the role is for, in IAM. */
  readonly roleDescription: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly logRetention: logs.RetentionDays;
  /** Settings only, never a secret value. */
  readonly environment: Readonly<Record<string, string>>;
  /**
   * X-Ray active tracing: the role may then also send trace segments.
   * @default false
   */
  readonly tracing?: boolean;
}

/**
 * A Node.js Lambda bundled from this project's TypeScript, with a log group and a role of its own: the role may
 * write that log group and nothing else until the caller grants more. Creates `<id>Logs`, `<id>Role` and `<id>`
 * in `scope`.
 */
export function createBundledFunction(
  scope: Construct,
  id: string,
  options: BundledFunctionOptions,
): NodejsFunction {
  const logGroup = new logs.LogGroup(scope, `${id}Logs`, { retention: options.logRetention });

  // A role of its own instead of AWSLambdaBasicExecutionRole: logs go to this function's log group only.
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
    description: options.roleDescription,
  });
  logGroup.grantWrite(role);

  const fn = new NodejsFunction(scope, id, {
    description: options.description,
    entry: options.entry,
    handler: 'handler',
    projectRoot: PROJECT_ROOT,
    depsLockFilePath: path.join(PROJECT_ROOT, 'package-lock.json'),
    runtime: RUNTIME,
    architecture: lambda.Architecture.ARM_64,
    memorySize: options.memorySize,
    timeout: options.timeout,
    role,
    logGroup,
    environment: { ...options.environment },
    tracing: options.tracing ? lambda.Tracing.ACTIVE : undefined,
    bundling: {
      minify: true,
      sourceMap: false,
      // The SDK's ESM build breaks when bundled; CommonJS works, and the pinned SDK goes into the asset so
      // the artifact runs as built, independent of the SDK version the runtime happens to ship.
      format: OutputFormat.CJS,
      target: BUNDLE_TARGET,
      externalModules: [],
      mainFields: [...SLIM_BUNDLING.mainFields],
      // esbuild runs in the project root, so the alias target is relative to it.
      esbuildArgs: {
        '--alias': Object.entries(SLIM_BUNDLING.aliases).map(
          ([name, replacement]) => `${name}=${replacement}`,
        ),
      },
      forceDockerBundling: false,
    },
  });
  dependOnPolicyOnly(fn, role);
  if (options.tracing) acknowledgeTraceWrites(role);
  return fn;
}

/** Active tracing adds xray:PutTraceSegments and xray:PutTelemetryRecords on "*" to the role's policy. */
function acknowledgeTraceWrites(role: iam.Role): void {
  const policy = role.node.tryFindChild('DefaultPolicy');
  if (policy === undefined) throw new Error('The function role has no default policy to acknowledge');
  NagSuppressions.addResourceSuppressions(policy, [
    {
      id: 'AwsSolutions-IAM5',
      reason:
        'X-Ray active tracing (the opt-in tracing prop): xray:PutTraceSegments and xray:PutTelemetryRecords ' +
        'support no resource-level permissions, so they can only be granted on "*"; they only write traces.',
      appliesTo: ['Resource::*'],
    },
  ]);
}

/** The policies each function must not be created before: its default policy, and managed ones added later. */
const POLICIES_FIRST = new WeakMap<lambda.IFunction, CfnResource[]>();

/**
 * The function must not be created before its role's policy (it could run without its permissions), but
 * CloudFormation already orders it after the role through `Fn::GetAtt`: an explicit DependsOn on the role is
 * redundant (cfn-lint W3005), so only the policies are kept. The log group grant has created the default policy;
 * every later grant lands in it, or in a managed policy added with dependOnManagedPolicy.
 */
function dependOnPolicyOnly(fn: NodejsFunction, role: iam.Role): void {
  const policy = role.node.tryFindChild('DefaultPolicy')?.node.defaultChild;
  if (!(policy instanceof iam.CfnPolicy)) {
    throw new Error('The function role has no default policy to depend on');
  }
  const policies: CfnResource[] = [policy];
  POLICIES_FIRST.set(fn, policies);
  (fn.node.defaultChild as lambda.CfnFunction).addOverride(
    'DependsOn',
    Lazy.list({ produce: () => policies.map((first) => first.logicalId) }),
  );
}

/**
 * Creates (and updates) `fn` only once `policy` exists: a managed policy attached to its role, which the function
 * does not reference, so CloudFormation would otherwise be free to run the new code before the grant is in place.
 */
export function dependOnManagedPolicy(fn: lambda.IFunction, policy: iam.ManagedPolicy): void {
  const policies = POLICIES_FIRST.get(fn);
  const resource = policy.node.defaultChild;
  if (policies === undefined || !(resource instanceof iam.CfnManagedPolicy)) {
    throw new Error('Only a function made by createBundledFunction can depend on a managed policy');
  }
  if (!policies.includes(resource)) policies.push(resource);
}
