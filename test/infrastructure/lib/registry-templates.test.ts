import { Duration, NestedStack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApiStack } from '../../../lib/payment-api-stack';
import { unbundledApp } from '../../support/construct-template';
import { fingerprintOf, type TemplateFingerprint } from '../../support/template-fingerprints';
import { REGISTRY_CONFIGURATIONS } from './fixtures/registry-configurations';
import recorded from './fixtures/registry-templates.json';

/**
 * Up to 256 shards, a stack's templates are what they were before the registry could grow to 1,024 (recorded at
 * commit 993eb6d): every resource and output with the same logical ID and the same content, in the parent stack and
 * in each nested stack. The only addition is DemoKeyHome, which places the generated demo key in demo's home shard
 * (shard 19 at 64 and 256 shards) when the stack is created.
 */
const RECORDED = recorded as Readonly<Record<string, Readonly<Record<string, TemplateFingerprint>>>>;

const ADDED = /^PaymentApiDemoKeyHome/;

/** Added by the key format (issue 25), not by the registry: the stack's KeyPrefix output and KEY_PREFIX, LEGACY_KEYS. */

type TemplateJson = {
  Resources?: Record<string, { Type?: string; Properties?: Record<string, unknown> }>;
  Outputs?: Record<string, unknown>;
};

function withoutKeyFormat(template: TemplateJson): TemplateJson {
  const copy = JSON.parse(JSON.stringify(template)) as TemplateJson;
  delete copy.Outputs?.KeyPrefix;
  for (const resource of Object.values(copy.Resources ?? {})) {
    if (resource.Type !== 'AWS::Lambda::Function') continue;
    const variables = (
      resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined
    )?.Variables;
    if (variables !== undefined) {
      const { KEY_PREFIX: _prefix, LEGACY_KEYS: _legacy, ...rest } = variables;
      (resource.Properties as { Environment: { Variables: unknown } }).Environment.Variables = rest;
    }
  }
  return copy;
}

describe.each(Object.keys(REGISTRY_CONFIGURATIONS))('The templates of a stack of %s', (name) => {
  let before: Readonly<Record<string, TemplateFingerprint>>;
  let now: Record<string, TemplateFingerprint>;

  beforeAll(() => {
    const configuration = REGISTRY_CONFIGURATIONS[name];
    const recordedStacks = RECORDED[name];
    if (configuration === undefined || recordedStacks === undefined)
      throw new Error(`nothing recorded for "${name}"`);
    before = recordedStacks;
    const { stackName, props } = configuration(Duration);
    const stack = new PaymentApiStack(unbundledApp(), stackName, props);
    now = {
      [stack.node.path]: fingerprintOf(withoutKeyFormat(Template.fromStack(stack).toJSON())),
    };
    for (const child of stack.node.findAll()) {
      if (child instanceof NestedStack)
        now[child.node.path] = fingerprintOf(withoutKeyFormat(Template.fromStack(child).toJSON()));
    }
  }, 120_000);

  it('has the same stacks, nested ones included', () => {
    expect(Object.keys(now).sort()).toEqual(Object.keys(before).sort());
  });

  it('keeps every resource and output it had, by logical ID, unchanged', () => {
    for (const [path, recordedStack] of Object.entries(before)) {
      const current = now[path];
      const kept = (record: Readonly<Record<string, string>> = {}, ids: readonly string[]) =>
        Object.fromEntries(ids.map((id) => [id, record[id]]));
      expect(kept(current?.resources, Object.keys(recordedStack.resources))).toEqual(recordedStack.resources);
      expect(current?.outputs).toEqual(recordedStack.outputs);
    }
  });

  it("adds only DemoKeyHome's function, role, log group, policy and custom resource", () => {
    const added = Object.entries(now).flatMap(([path, current]) =>
      Object.keys(current.resources).filter((id) => before[path]?.resources[id] === undefined),
    );

    expect(added.length).toBeGreaterThan(0);
    expect(added.filter((id) => !ADDED.test(id))).toEqual([]);
  });
});
