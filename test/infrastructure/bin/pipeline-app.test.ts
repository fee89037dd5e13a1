import { Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { createApp } from '../../../bin/payment-api';
import { PIPELINE_ACCESS_STACK_NAME, PipelineAccessStack } from '../../../lib/pipeline-access-stack';
import { unbundledApp } from '../../support/construct-template';
import { contextProblems } from './app';

/** The stacks the app holds for this context, by id. */
function stacksOf(context: Record<string, unknown>): string[] {
  return createApp(unbundledApp(context))
    .node.children.filter((child) => child instanceof Stack)
    .map((stack) => stack.node.id);
}

function problemsWith(context: Record<string, unknown>): readonly string[] {
  return contextProblems(() => createApp(unbundledApp(context)));
}

function stackOf(context: Record<string, unknown>, stackName: string): Stack {
  return Stack.of(createApp(unbundledApp(context)).node.findChild(stackName));
}

/**
 * The template, with each asset's S3 key left out: unbundled, an asset's key is a hash of where the app was made,
 * not of its content (cdk synth bundles, and keys each bundle by its content).
 */
function templateText(stack: Stack): string {
  const json = JSON.stringify(Template.fromStack(stack).toJSON());
  return json.replace(/"S3Key":"[0-9a-f]{64}\.zip"/g, '"S3Key":"<asset>"');
}

describe('the app and the pipeline', () => {
  it("holds one stack without pipeline keys, so a newcomer's npx cdk deploy (no stack named) deploys it as before", () => {
    expect(stacksOf({})).toEqual(['PaymentApi']);
    expect(stacksOf({ env: 'staging' })).toEqual(['PaymentApi-staging']);
  });

  it('holds the access stack alone with githubRepository, for npx cdk deploy PaymentApiPipelineAccess', () => {
    expect(stacksOf({ githubRepository: 'octo-org/payment-api' })).toEqual(['PaymentApiPipelineAccess']);
  });

  it('makes one stack per environment with envs, each exactly as -c env=<name> makes it, cdk.json entries included', () => {
    // Arrange: production has settings of its own in cdk.json's environments.
    const environments = { production: { wafRateLimit: 5000, createDemoApp: false }, staging: {} };

    // Act
    const app = createApp(unbundledApp({ envs: 'staging,production', environments }));

    // Assert
    expect(app.node.children.filter((child) => child instanceof Stack).map((stack) => stack.node.id)).toEqual(
      ['PaymentApi-staging', 'PaymentApi-production'],
    );
    for (const env of ['staging', 'production']) {
      expect(templateText(Stack.of(app.node.findChild(`PaymentApi-${env}`)))).toEqual(
        templateText(stackOf({ env, environments }, `PaymentApi-${env}`)),
      );
    }
  });

  it.each<[string, Record<string, unknown>, string[]]>([
    [
      'a repository that is not owner/name',
      { githubRepository: 'payment-api' },
      [
        'context "githubRepository" must be <owner>/<repository>, as in https://github.com/<owner>/<repository> (letters, digits, ".", "_" or "-"), got "payment-api"',
      ],
    ],
    [
      'repository ids without the repository',
      { githubRepositoryIds: '123456/456789' },
      ['context "githubRepositoryIds" needs "githubRepository": the ids are of that repository'],
    ],
    [
      'envs beside env',
      { env: 'staging', envs: 'staging,production' },
      ['context "envs" cannot be used with "env": "envs" names every environment to synthesize'],
    ],
    [
      'an environment named twice',
      { envs: 'staging,staging' },
      [
        'context "envs" must be a comma-separated list of 1 to 24 letters, digits or hyphens, starting with a letter and not ending with a hyphen, each once, got "staging,staging"',
      ],
    ],
    [
      'an environment without its cdk.json entry',
      { envs: 'staging,prod', environments: { staging: {}, production: {} } },
      [
        'context "env" is "prod", which names no entry of "environments" in cdk.json (known: staging, production); did you mean "production"?',
      ],
    ],
  ])('stops the synth with one line per problem for %s', (_case, context, problems) => {
    expect(problemsWith(context)).toEqual(problems);
  });

  // What each of these props does to the roles is proved in test/infrastructure/lib/pipeline-access-stack.test.ts.
  it('passes the immutable subject, the stages by their stack names, the Regions and the bootstrap qualifier to the access stack', () => {
    const qualifier = { '@aws-cdk/core:bootstrapQualifier': 'pay1' };
    const context = {
      githubRepository: 'octo-org/payment-api',
      githubRepositoryIds: '123456/456789',
      pipelineStages: 'beta,gamma,prod',
      pipelineRegions: 'eu-west-1',
      ...qualifier,
    };
    const direct = new PipelineAccessStack(unbundledApp(qualifier), PIPELINE_ACCESS_STACK_NAME, {
      githubRepository: 'octo-org/payment-api',
      repositoryIds: { ownerId: '123456', repositoryId: '456789' },
      stages: ['beta', 'gamma', 'prod'].map((environment) => ({
        environment,
        stackName: `PaymentApi-${environment}`,
      })),
      regions: ['eu-west-1'],
      cdkQualifier: 'pay1',
    });

    const { Description: _description, ...made } = Template.fromStack(
      stackOf(context, PIPELINE_ACCESS_STACK_NAME),
    ).toJSON();

    expect(made).toEqual(Template.fromStack(direct).toJSON());
  });
});
