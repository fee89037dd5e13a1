import { UsageError } from '../../../../tools/common/exit';
import {
  DIFF_COMMENT_MARKER,
  parseDiffCommentArgs,
  renderDiffComment,
  riskyChanges,
} from '../../../../tools/pipeline/diff-comment';

/** What cdk diff --no-color prints for a change of each kind (CLI 2.1148). */
const DIFF = `Stack PaymentApi-staging
IAM Statement Changes
┌───┬──────────┐
│   │ Resource │
└───┴──────────┘
Resources
[-] AWS::SNS::Topic PaymentApi/AlarmTopic AlarmTopicD01E77F9 destroy
[~] AWS::SecretsManager::Secret PaymentApi/Keys KeysSecret1234ABCD replace
 └─ [~] Name (requires replacement)
     ├─ [-] payment-api/keys
     └─ [+] payment-api/keys-2
[~] AWS::Lambda::Function PaymentApi/Handler Handler886CB40B
 ├─ [~] Code
 └─ [~] FunctionName (may cause replacement)
[~] AWS::Lambda::Function PaymentApi/Rotation Rotation1A2B3C4D
 └─ [~] MemorySize
     ├─ [-] 256
     └─ [+] 512
[+] AWS::SQS::Queue PaymentApi/Queue Queue4A7E3555

Outputs
[-] Output OldUrl: {"Value":"x"}

✨  Number of stacks with differences: 1
`;

describe('riskyChanges', () => {
  it('lists each resource destroyed or replaced once, a property that forces replacement with its resource', () => {
    expect(riskyChanges(DIFF)).toEqual([
      { kind: 'destroy', line: '[-] AWS::SNS::Topic PaymentApi/AlarmTopic AlarmTopicD01E77F9 destroy' },
      { kind: 'replace', line: '[~] AWS::SecretsManager::Secret PaymentApi/Keys KeysSecret1234ABCD replace' },
      {
        kind: 'replace',
        line: '[~] AWS::Lambda::Function PaymentApi/Handler Handler886CB40B: [~] FunctionName (may cause replacement)',
      },
    ]);
  });

  it('finds nothing in a diff that only adds and updates in place, colours included', () => {
    const colour = (text: string): string => `\u001b[32m${text}\u001b[39m`;

    expect(
      riskyChanges(
        `${colour('[+] AWS::SQS::Queue Q Q1')}\n[~] AWS::Lambda::Function F F1\n └─ [~] MemorySize\n`,
      ),
    ).toEqual([]);
  });
});

describe('renderDiffComment', () => {
  it('starts with the marker the workflow finds it by, and counts what each stage destroys and replaces', () => {
    const body = renderDiffComment([
      { stage: 'staging', text: DIFF },
      { stage: 'production', text: 'Stack PaymentApi-production\nThere were no differences\n' },
    ]);

    expect(body.split('\n', 1)[0]).toBe(DIFF_COMMENT_MARKER);
    expect(body).toContain('| staging | **1** :warning: | **2** :warning: |');
    expect(body).toContain('| production | 0 | 0 |');
    expect(body).toContain(
      '- **destroy**: `[-] AWS::SNS::Topic PaymentApi/AlarmTopic AlarmTopicD01E77F9 destroy`',
    );
    expect(body).toContain('```diff\nStack PaymentApi-production\nThere were no differences\n```');
  });

  it('stays within the size GitHub allows a comment, saying where the rest is', () => {
    const huge = `[+] AWS::SQS::Queue Q Q1\n${'x'.repeat(200_000)}`;

    const body = renderDiffComment([
      { stage: 'staging', text: huge },
      { stage: 'production', text: huge },
    ]);

    expect(body.length).toBeLessThan(65_536);
    expect(body).toContain("(cut: the job's log has it all)");
  });

  it('fences a diff that holds backticks with a longer fence', () => {
    const body = renderDiffComment([{ stage: 'staging', text: 'a ``` b' }]);

    expect(body).toContain('````diff\na ``` b\n````');
  });
});

describe('parseDiffCommentArgs', () => {
  it('reads <stage>=<file> pairs in order', () => {
    expect(parseDiffCommentArgs(['staging=a.diff', 'production=b/c.diff'])).toEqual([
      { stage: 'staging', file: 'a.diff' },
      { stage: 'production', file: 'b/c.diff' },
    ]);
  });

  it.each([
    [[]],
    [['staging']],
    [['=a.diff']],
    [['staging=']],
    [['1st=a.diff']],
    [['staging=a', 'staging=b']],
  ])('refuses %j as usage', (argv) => {
    expect(() => parseDiffCommentArgs(argv)).toThrow(UsageError);
  });
});
