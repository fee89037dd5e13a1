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

  it('keeps its one keys secret exactly: logical ID, value or its generation, key, retention, acknowledgements', () => {
    expect(now.secrets).toEqual(before.secrets);
  });

  it('keeps its rotation schedule exactly, or has none as before', () => {
    expect(now.rotationSchedules).toEqual(before.rotationSchedules);
  });

  it('keeps the KeysSecretArn output exactly', () => {
    expect(now.keysSecretOutput).toEqual(before.keysSecretOutput);
  });

  it('keeps every grant on the secret and its KMS key, statement by statement, in the policies that held them', () => {
    expect(now.policies).toEqual(before.policies);
  });

  it('gives the payment (and rotation) function the same registry environment: the secret, nothing more', () => {
    expect(now.functionEnvironments).toEqual(before.functionEnvironments);
  });
});
