/** Synthesizing the PaymentApi construct and reading its template: shared by the construct's test files. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApi, type PaymentApiProps } from '../../lib/payment-api';

/** The feature flags the CDK CLI applies from cdk.json, so tests see the template that deploys. */
export const CDK_JSON_CONTEXT = (
  JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'cdk.json'), 'utf8')) as {
    context: Record<string, unknown>;
  }
).context;

/** Bundling runs esbuild for every stack: only the stack whose asset is inspected bundles for real. */
export const SKIP_BUNDLING = { 'aws:cdk:bundling-stacks': [] };

export interface Synthesized {
  readonly app: App;
  readonly stack: Stack;
  readonly template: Template;
}

export function synthesize(
  props: PaymentApiProps = {},
  options: { bundle?: boolean; extra?: (stack: Stack) => PaymentApiProps } = {},
): Synthesized {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, ...(options.bundle ? {} : SKIP_BUNDLING) } });
  const stack = new Stack(app, 'Test');
  new PaymentApi(stack, 'PaymentApi', { ...props, ...options.extra?.(stack) });
  return { app, stack, template: Template.fromStack(stack) };
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

/** The statements of the policies attached to one function's role. */
export function functionRoleStatements(template: Template, functionId: string): Statement[] {
  const fn = template.findResources('AWS::Lambda::Function')[functionId] as
    { Properties: { Role: { 'Fn::GetAtt': [string, string] } } } | undefined;
  const roleRef = { Ref: fn?.Properties.Role['Fn::GetAtt'][0] };
  return Object.values(template.findResources('AWS::IAM::Policy'))
    .map((policy) => (policy as PolicyResource).Properties)
    .filter((policy) => policy.Roles.some((role) => JSON.stringify(role) === JSON.stringify(roleRef)))
    .flatMap((policy) => policy.PolicyDocument.Statement);
}

export function actionsOf(statement: Statement): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}

/** The code esbuild wrote for one function of a stack synthesized with `bundle: true`. */
export function readBundle(synthesized: Synthesized, functionId: string): string {
  const assembly = synthesized.app.synth();
  const fn = synthesized.template.findResources('AWS::Lambda::Function')[functionId] as
    { Properties: { Code: { S3Key: string } } } | undefined;
  const s3Key = fn?.Properties.Code.S3Key ?? '';
  return readFileSync(
    path.join(assembly.directory, `asset.${s3Key.replace(/\.zip$/, '')}`, 'index.js'),
    'utf8',
  );
}

/**
 * What a bundle still loads at run time besides Node built-ins and the SDK's optional signers, which it loads
 * inside try/catch only: nothing, when the SDK is bundled.
 */
export function externalRequires(bundle: string): string[] {
  const required = new Set(
    [...bundle.matchAll(/require\(["']([^"']+)["']\)/g)].map((match) => match[1] ?? ''),
  );
  return [...required].filter(
    (name) =>
      !name.startsWith('node:') && !['@aws-sdk/signature-v4-crt', '@aws-sdk/signature-v4a'].includes(name),
  );
}

/** Builds the construct alone, without bundling: enough for prop validation, which throws in the constructor. */
export function constructUnbundled(props: PaymentApiProps): void {
  const app = new App({ context: { ...CDK_JSON_CONTEXT, ...SKIP_BUNDLING } });
  new PaymentApi(new Stack(app, 'Test'), 'PaymentApi', props);
}

/** A bundle as Lambda loads it: CommonJS, minified, no source map (never printed whole if it fails). */
export function expectMinifiedCommonJs(bundle: string): void {
  expect(bundle.slice(0, 13)).toBe('"use strict";');
  expect(/^\s*(import|export)\s/m.test(bundle)).toBe(false);
  expect(bundle.includes('sourceMappingURL')).toBe(false);
  expect(bundle.split('\n').length).toBeLessThan(200);
}
