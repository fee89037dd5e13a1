/**
 * cfn-lint on templates built from typed props, for the options that scripts/cfn-lint.sh cannot reach through
 * context keys yet: monitoring with every option, and tracing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { App, Duration } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { PaymentApiStack, type PaymentApiStackProps } from '../../lib/payment-api-stack';
import { CDK_JSON_CONTEXT, SKIP_BUNDLING } from './construct-template';

interface LintResult {
  readonly exitCode: number;
  readonly findings: string;
}

/** cfn-lint's parseable output, one finding a line; exit code 0 only when there is none. */
async function cfnLint(templatePath: string): Promise<LintResult> {
  try {
    const { stdout } = await promisify(execFile)('cfn-lint', ['--format', 'parseable', '--', templatePath]);
    return { exitCode: 0, findings: stdout.trim() };
  } catch (error) {
    const failure = error as { code?: number | string; stdout?: string; stderr?: string };
    return {
      exitCode: typeof failure.code === 'number' ? failure.code : -1,
      findings: `${failure.stdout ?? ''}${failure.stderr ?? ''}`.trim() || String(failure.code),
    };
  }
}

describe('cfn-lint on the stack with monitoring options', () => {
  let dir: string;

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'payment-api-cfn-lint-'));
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it.each<[string, PaymentApiStackProps]>([
    [
      'email alarm notices, tuned alarms and tracing',
      {
        alarmEmail: 'oncall@example.com',
        metricsNamespace: 'Payments/Production',
        unauthorizedAlarmThreshold: 50,
        latencyAlarmThreshold: Duration.millis(800),
        serverErrorRateAlarmThreshold: 2,
        tracing: true,
      },
    ],
    [
      'an existing alarm topic, tracing and scheduled rotation',
      {
        alarmTopicArn: 'arn:aws:sns:eu-west-1:123456789012:oncall',
        tracing: true,
        rotation: { every: Duration.days(30) },
      },
    ],
  ])('finds nothing with %s', async (name, props) => {
    // Arrange
    const app = new App({ context: { ...CDK_JSON_CONTEXT, ...SKIP_BUNDLING } });
    const template = Template.fromStack(new PaymentApiStack(app, 'PaymentApi', props));
    const templatePath = join(dir, `${name.replace(/\W+/g, '-')}.template.json`);
    writeFileSync(templatePath, JSON.stringify(template.toJSON(), null, 1));

    // Act
    const result = await cfnLint(templatePath);

    // Assert
    expect(result).toEqual({ exitCode: 0, findings: '' });
  });
});
