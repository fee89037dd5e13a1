import { Lazy, Stack } from 'aws-cdk-lib';
import {
  chunkSecretsForPolicies,
  createSecretGrantPolicies,
  IAM_POLICY_LIMITS,
  policyDocumentLength,
  secretArnLengthBound,
  type GrantedSecret,
} from '../../../lib/secret-grants';
import { unbundledApp } from '../../support/construct-template';

const ACTIONS = ['secretsmanager:GetSecretValue'];

function secrets(count: number, nameLength: number): GrantedSecret[] {
  return Array.from({ length: count }, (_, index) => ({
    arn: `arn-${index}`,
    arnLengthBound: secretArnLengthBound('n'.repeat(nameLength)),
  }));
}

describe('secretArnLengthBound', () => {
  it('counts the ARN with the longest partition, a 20-character Region, the account and the suffix', () => {
    const name = 'payment-api/PaymentApi/keys/shard-255';
    const longest = `arn:aws-us-gov:secretsmanager:${'r'.repeat(20)}:123456789012:secret:${name}-AbCdEf`;

    expect(secretArnLengthBound(name)).toBe(longest.length);
  });

  it('takes a name not known at synth at the longest Secrets Manager allows, 512', () => {
    const name = Lazy.string({ produce: () => 'short' });

    expect(secretArnLengthBound(name)).toBe(secretArnLengthBound('n'.repeat(512)));
  });
});

describe('policyDocumentLength', () => {
  it('is the length of the policy document IAM stores, without whitespace', () => {
    const document = {
      Version: '2012-10-17',
      Statement: [{ Action: ['a:B', 'a:C'], Effect: 'Allow', Resource: ['xxxx', 'yy'] }],
    };

    expect(policyDocumentLength(['a:B', 'a:C'], [4, 2])).toBe(JSON.stringify(document).length);
  });
});

describe('chunkSecretsForPolicies', () => {
  it('fills each chunk up to the limit, keeps the order, and leaves nothing out', () => {
    // Arrange
    const all = secrets(255, 62);

    // Act
    const chunks = chunkSecretsForPolicies(all, ACTIONS);

    // Assert
    expect(chunks.flat()).toEqual(all);
    for (const [index, chunk] of chunks.entries()) {
      const lengths = chunk.map((secret) => secret.arnLengthBound);
      expect(policyDocumentLength(ACTIONS, lengths)).toBeLessThanOrEqual(
        IAM_POLICY_LIMITS.managedPolicyCharacters,
      );
      const next = chunks[index + 1]?.[0];
      if (next !== undefined) {
        expect(policyDocumentLength(ACTIONS, [...lengths, next.arnLengthBound])).toBeGreaterThan(
          IAM_POLICY_LIMITS.managedPolicyCharacters,
        );
      }
    }
    expect(chunks).toHaveLength(7);
  });

  it('returns no chunk for no secret', () => {
    expect(chunkSecretsForPolicies([], ACTIONS)).toEqual([]);
  });
});

describe('createSecretGrantPolicies', () => {
  it('refuses at synth a grant that needs more managed policies than a role takes, saying what to change', () => {
    const stack = new Stack(unbundledApp(), 'Test');

    expect(() =>
      createSecretGrantPolicies(stack, 'Read', {
        description: 'read',
        actions: ACTIONS,
        secrets: secrets(255, 400),
      }),
    ).toThrow(
      'secretsmanager:GetSecretValue on 255 secrets needs 22 managed policies at the longest ARNs, and a role takes 10: use fewer shards or a shorter stack name',
    );
  });

  it('makes one managed policy per chunk, each with one statement on its secrets only', () => {
    const stack = new Stack(unbundledApp(), 'Test');

    const policies = createSecretGrantPolicies(stack, 'Read', {
      description: 'read the shards',
      actions: ACTIONS,
      secrets: secrets(100, 62),
    });

    expect(policies.map((policy) => policy.node.id)).toEqual(['Read1', 'Read2', 'Read3']);
    expect(stack.resolve(policies[2]?.document.toJSON())).toEqual({
      Version: '2012-10-17',
      Statement: [
        {
          Action: 'secretsmanager:GetSecretValue',
          Effect: 'Allow',
          Resource: Array.from({ length: 100 - 84 }, (_, index) => `arn-${84 + index}`),
        },
      ],
    });
  });
});
