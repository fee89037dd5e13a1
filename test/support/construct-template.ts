/**
 * Synthesizing the PaymentApi construct (or its stack) and reading its template: shared by the unit tests of lib/.
 * Nothing here bundles: esbuild runs in a child process, which the unit project does not start. The bundled
 * functions are tested from cdk.out in test/integration/artifact.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack, type AppProps } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApi, type PaymentApiProps } from '../../lib/payment-api';
import { PaymentApiStack, type PaymentApiStackProps } from '../../lib/payment-api-stack';

/** The feature flags the CDK CLI applies from cdk.json, so tests see the template that deploys. */
export const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

/** Bundling would run esbuild for every stack: unit tests read templates, never bundles. */
export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

/**
 * What every unit test's app is made with: cdk.json's flags, no bundling, and no built-in CloudFormation
 * validation. That validation only reports (it cannot fail a synth unless asked to), and starting its engine costs
 * seconds of CPU in every test file; `cdk synth` still runs it, and scripts/cfn-lint.sh lints the templates.
 */
export const UNIT_APP_PROPS: AppProps = {
  context: { ...CDK_JSON_CONTEXT, ...SKIP_BUNDLING },
  builtinCloudFormationValidation: false,
};

/** An app as the CDK CLI would make it, without bundling. */
export function unbundledApp(context: Record<string, unknown> = {}): App {
  return new App({ ...UNIT_APP_PROPS, context: { ...UNIT_APP_PROPS.context, ...context } });
}

export interface Synthesized {
  readonly app: App;
  readonly stack: Stack;
  readonly template: Template;
}

/** The construct alone, in stack "Test"; `extra` makes props that need the stack (imported or new resources). */
export function synthesize(
  props: PaymentApiProps = {},
  options: { extra?: (stack: Stack) => PaymentApiProps } = {},
): Synthesized {
  const app = unbundledApp();
  const stack = new Stack(app, 'Test');
  new PaymentApi(stack, 'PaymentApi', { ...props, ...options.extra?.(stack) });
  return { app, stack, template: Template.fromStack(stack) };
}

/**
 * `make`'s template for these props, synthesized once per test file (jest gives each file its own modules) and shared
 * by every test that only reads it. Props are told apart by their JSON: Durations by amount and unit. Validation
 * errors are thrown, not cached.
 */
function sharedBy<Props extends object>(make: (props: Props) => Template): (props?: Props) => Template {
  const templates = new Map<string, Template>();
  return (props = {} as Props) => {
    const key = JSON.stringify(props);
    let template = templates.get(key);
    if (template === undefined) {
      template = make(props);
      templates.set(key, template);
    }
    return template;
  };
}

/** The construct's template for these props, shared (sharedBy). */
export const sharedTemplate = sharedBy((props: PaymentApiProps) => synthesize(props).template);

/** PaymentApiStack named `id`, as the CDK app would make it from its context. */
export function synthesizeStack(id: string, props: PaymentApiStackProps = {}): Template {
  return Template.fromStack(new PaymentApiStack(unbundledApp(), id, props));
}

/** PaymentApiStack "PaymentApi" for these props, shared (sharedBy). */
export const sharedStackTemplate = sharedBy((props: PaymentApiStackProps) =>
  synthesizeStack('PaymentApi', props),
);

/** A resource of a template, as the tests read it. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
  readonly DependsOn?: string[];
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
  readonly Metadata?: {
    cdk_nag?: { rules_to_suppress: { id: string; reason: string; applies_to?: unknown[] }[] };
  };
}

/**
 * A function as lib/bundled-function.ts makes every one: Node.js 24 on arm64, `index.handler`, its own role and log
 * group, created once its role policy exists (and no redundant dependency on the role); what differs (memory,
 * timeout, environment) is given. Its log group, kept `logRetentionDays`, its role and its role's policy are found
 * by the construct path their logical IDs start with (`PaymentApiHandler`).
 */
export function bundledFunctionResource(
  template: Template,
  path: string,
  own: {
    readonly logRetentionDays: number;
    readonly MemorySize: number;
    readonly Timeout: number;
    readonly Variables: Record<string, unknown>;
  },
): TemplateResource {
  const retention = { Properties: { RetentionInDays: own.logRetentionDays } };
  const ids = {
    logGroupId: onlyLogicalId(template, 'AWS::Logs::LogGroup', retention, new RegExp(`^${path}Logs`)),
    roleId: onlyLogicalId(template, 'AWS::IAM::Role', {}, new RegExp(`^${path}Role[0-9A-F]{8}$`)),
    policyId: onlyLogicalId(template, 'AWS::IAM::Policy', {}, new RegExp(`^${path}Role`)),
  };
  return {
    Type: 'AWS::Lambda::Function',
    Properties: {
      Runtime: 'nodejs24.x',
      Architectures: ['arm64'],
      Handler: 'index.handler',
      MemorySize: own.MemorySize,
      Timeout: own.Timeout,
      Code: expect.any(Object) as unknown,
      Description: expect.any(String) as unknown,
      Role: { 'Fn::GetAtt': [ids.roleId, 'Arn'] },
      LoggingConfig: { LogGroup: { Ref: ids.logGroupId } },
      Environment: { Variables: own.Variables },
    },
    DependsOn: [ids.policyId],
  };
}

export /** The ARN CDK builds from a secret name in an environment-agnostic stack. */
function partialArnJoin(name: string): unknown {
  return {
    'Fn::Join': [
      '',
      [
        'arn:',
        { Ref: 'AWS::Partition' },
        ':secretsmanager:',
        { Ref: 'AWS::Region' },
        ':',
        { Ref: 'AWS::AccountId' },
        `:secret:${name}`,
      ],
    ],
  };
}

/** The template's resources by logical ID, only those of `type` when given. */
export function resourcesOf(template: Template, type?: string): Record<string, TemplateResource> {
  const all = (template.toJSON() as { Resources: Record<string, TemplateResource> }).Resources;
  if (type === undefined) return all;
  return Object.fromEntries(Object.entries(all).filter(([, resource]) => resource.Type === type));
}

/** The resource of that logical ID: a test naming one the template does not have fails here, saying which. */
export function resourceOf(template: Template, logicalId: string): TemplateResource {
  const found = resourcesOf(template)[logicalId];
  if (found === undefined) throw new Error(`No resource ${logicalId} in the template`);
  return found;
}

/** The logical id of the one resource of that type (whose id matches `idPattern`, when given). */
export function onlyLogicalId(
  template: Template,
  type: string,
  props: Record<string, unknown> = {},
  idPattern: RegExp = /.*/,
): string {
  const ids = Object.keys(template.findResources(type, props)).filter((id) => idPattern.test(id));
  expect(ids).toHaveLength(1);
  return ids[0] ?? '';
}

/** The payment Lambda, the key registry monitor and the rotation function, by logical ID, in stack "Test". */
export const FUNCTION_IDS = {
  handler: /^PaymentApiHandler[0-9A-F]{8}$/,
  monitor: /^PaymentApiKeyRegistryMonitorFunction[0-9A-F]{8}$/,
  rotation: /^PaymentApiKeyRotationFunction[0-9A-F]{8}$/,
} as const;

/** The logical ID of the payment Lambda, the monitor or the rotation function. */
export function functionLogicalId(template: Template, fn: keyof typeof FUNCTION_IDS): string {
  return onlyLogicalId(template, 'AWS::Lambda::Function', {}, FUNCTION_IDS[fn]);
}

/** The environment variables of the payment Lambda, the monitor or the rotation function. */
export function functionEnvironment(
  template: Template,
  fn: keyof typeof FUNCTION_IDS = 'handler',
): Record<string, unknown> {
  const environment = resourceOf(template, functionLogicalId(template, fn)).Properties.Environment;
  return (environment as { Variables: Record<string, unknown> }).Variables;
}

export interface Statement {
  readonly Action: string | string[];
  readonly Resource: unknown;
  readonly Effect: string;
  readonly Condition?: unknown;
}

interface PolicyResource {
  readonly Properties: { PolicyDocument: { Statement: Statement[] }; Roles: unknown[] };
}

/** Every statement of every IAM policy in the template. */
export function policyStatements(template: Template): Statement[] {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => (policy as PolicyResource).Properties.PolicyDocument.Statement,
  );
}

/** The logical ID of one function's role. */
export function roleLogicalId(template: Template, functionId: string): string {
  const fn = template.findResources('AWS::Lambda::Function')[functionId] as
    { Properties: { Role: { 'Fn::GetAtt': [string, string] } } } | undefined;
  return fn?.Properties.Role['Fn::GetAtt'][0] ?? '';
}

/** The statements of the policies (`AWS::IAM::Policy`, or managed ones when told) attached to one function's role. */
export function functionRoleStatements(
  template: Template,
  functionId: string,
  type: 'AWS::IAM::Policy' | 'AWS::IAM::ManagedPolicy' = 'AWS::IAM::Policy',
): Statement[] {
  const roleRef = JSON.stringify({ Ref: roleLogicalId(template, functionId) });
  return Object.values(template.findResources(type))
    .map((policy) => (policy as PolicyResource).Properties)
    .filter((policy) => policy.Roles.some((role) => JSON.stringify(role) === roleRef))
    .flatMap((policy) => policy.PolicyDocument.Statement);
}

/** The statements with an action of that service (`kms:`, `secretsmanager:`). */
export function statementsOn(statements: Statement[], actionPrefix: string): Statement[] {
  return statements.filter((statement) =>
    actionsOf(statement).some((action) => action.startsWith(actionPrefix)),
  );
}

/** The condition of a KMS grant a function may use only through Secrets Manager. */
export const VIA_SECRETS_MANAGER = {
  StringEquals: {
    'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] },
  },
};

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** Builds the construct alone, without bundling: enough for prop validation, which throws in the constructor. */
export function constructUnbundled(props: PaymentApiProps): void {
  new PaymentApi(new Stack(unbundledApp(), 'Test'), 'PaymentApi', props);
}
