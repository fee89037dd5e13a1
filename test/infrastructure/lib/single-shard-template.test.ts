import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApiStack } from '../../../lib/payment-api-stack';
import { unbundledApp } from '../../support/construct-template';
import { keysTemplateParts, type KeysTemplateParts } from '../../support/keys-template';
import recorded from './fixtures/single-shard-keys.json';
import { SINGLE_SHARD_CONFIGURATIONS } from './fixtures/single-shard-configurations';

/**
 * A stack that stays on one shard keeps its keys secret exactly as it was before the key registry: the same secret
 * (logical ID, properties, retention, acknowledgements), rotation schedule, output, grants and environment, so a
 * deployed stack updates without touching its keys. The parts were recorded from the template of commit d8b9d17.
 */
const RECORDED = recorded as unknown as Readonly<Record<string, KeysTemplateParts>>;

/** The key registry monitor is new: it reads the one secret as the payment Lambda does (lib/key-registry-monitor.ts). */
const MONITOR = /^PaymentApiKeyRegistryMonitor/;

/** The entries of a record whose key matches `pattern`, and the others. */
function split<T>(
  record: Readonly<Record<string, T>>,
  pattern: RegExp,
): { matching: Record<string, T>; others: Record<string, T> } {
  const entries = Object.entries(record);
  return {
    matching: Object.fromEntries(entries.filter(([key]) => pattern.test(key))),
    others: Object.fromEntries(entries.filter(([key]) => !pattern.test(key))),
  };
}

/** The payment Lambda's statements on the secret and its key, as recorded. */
function handlerKeysStatements(parts: KeysTemplateParts): unknown[] {
  const [handlerPolicy] = Object.entries(parts.policies).filter(([id]) =>
    id.startsWith('PaymentApiHandlerRole'),
  );
  return handlerPolicy?.[1].statements ?? [];
}

describe.each(Object.entries(SINGLE_SHARD_CONFIGURATIONS))('A one-shard stack with %s', (name, config) => {
  let before: KeysTemplateParts;
  let now: KeysTemplateParts;

  beforeAll(() => {
    const recordedParts = RECORDED[name];
    if (recordedParts === undefined) throw new Error(`nothing recorded for "${name}"`);
    before = recordedParts;
    const stack = new PaymentApiStack(unbundledApp(), config.stackName, config.props);
    now = keysTemplateParts(Template.fromStack(stack).toJSON());
  });

  it('keeps its one keys secret (logical ID, value or its generation, key, retention, acknowledgements), its rotation schedule or none, the KeysSecretArn output, every grant on the secret and its KMS key, statement by statement, and the payment (and rotation) function’s registry environment exactly', () => {
    expect({
      ...now,
      policies: split(now.policies, MONITOR).others,
      functionEnvironments: split(now.functionEnvironments, MONITOR).others,
    }).toEqual(before);
  });

  it('adds one reader, the key registry monitor: the payment Lambda’s read grant, its environment, and BatchGetSecretValue', () => {
    // Arrange
    const monitorPolicies = Object.values(split(now.policies, MONITOR).matching);
    const monitorEnvironments = Object.values(split(now.functionEnvironments, MONITOR).matching);
    const handlerEnvironment = Object.entries(before.functionEnvironments).find(([id]) =>
      id.startsWith('PaymentApiHandler'),
    )?.[1];

    // Assert
    expect(monitorPolicies).toHaveLength(1);
    expect(monitorPolicies[0]?.statements).toEqual([
      ...handlerKeysStatements(before),
      { Action: 'secretsmanager:BatchGetSecretValue', Effect: 'Allow', Resource: '*' },
    ]);
    expect(monitorEnvironments).toEqual([handlerEnvironment]);
  });
});
