/**
 * What a GitHub Actions pipeline may do in the account, deployed once on its own
 * (`npx cdk deploy PaymentApiPipelineAccess -c githubRepository=<owner>/<repo>`): the GitHub OIDC provider, and per
 * stage a deploy role and a smoke-test role, plus a pull requests' diff role. No long-lived key anywhere.
 */
import { ArnFormat, CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { NagSuppressions } from 'cdk-nag';
import type { Construct } from 'constructs';
import {
  bootstrapRoleArns,
  CDK_QUALIFIER,
  DEFAULT_QUALIFIER,
  DEPLOY_ROLE_KINDS,
  REGION_NAME,
} from './pipeline/bootstrap-roles';
import { GitHubOidcProvider } from './pipeline/github-oidc-provider';
import { GitHubRole } from './pipeline/github-role';
import {
  GITHUB_REPOSITORY,
  githubSubject,
  type GitHubJobContext,
  type GitHubRepositoryIds,
} from './pipeline/github-subject';
import { requireFormat } from './validation';

export const PIPELINE_ACCESS_STACK_NAME = 'PaymentApiPipelineAccess';
/** Every role's name starts with this, so an account's pipeline roles are easy to find and to audit. */
export const PIPELINE_ROLE_PREFIX = 'PaymentApiPipeline';

/** A stage of the pipeline: the GitHub environment its jobs run in, and the payment stack they deploy. */
export interface PipelineStage {
  readonly environment: string;
  readonly stackName: string;
}

export interface PipelineAccessStackProps extends StackProps {
  /** `<owner>/<repository>` on GitHub, whose workflows may use the roles. */
  readonly githubRepository: string;
  /**
   * The owner's and the repository's numeric ids: the roles then trust GitHub's immutable subject
   * (`repo:<owner>@<id>/<repo>@<id>:...`) and no longer the name form.
   * @default - the name form, `repo:<owner>/<repo>:...`
   */
  readonly repositoryIds?: GitHubRepositoryIds;
  /**
   * The account's GitHub OIDC provider, when one exists already.
   * @default - the stack creates it
   */
  readonly existingOidcProviderArn?: string;
  /** The stages, in deploy order; one deploy role and one smoke-test role each. */
  readonly stages: readonly PipelineStage[];
  /**
   * The qualifier the account was bootstrapped with (`cdk bootstrap --qualifier`).
   * @default 'hnb659fds', the CDK's default
   */
  readonly cdkQualifier?: string;
  /**
   * The Regions the pipeline deploys to: the roles may use the bootstrap roles of these Regions only.
   * @default - the stack's own Region
   */
  readonly regions?: readonly string[];
}

/** The roles of one stage. */
export interface StageRoles {
  readonly deploy: iam.Role;
  readonly smoke: iam.Role;
}

export class PipelineAccessStack extends Stack {
  public readonly oidcProviderArn: string;
  public readonly stageRoles: ReadonlyMap<string, StageRoles>;
  public readonly diffRole: iam.Role;

  constructor(scope: Construct, id: string, props: PipelineAccessStackProps) {
    super(scope, id, props);
    requireFormat('githubRepository', GITHUB_REPOSITORY, props.githubRepository);
    const qualifier = props.cdkQualifier ?? DEFAULT_QUALIFIER;
    requireFormat('cdkQualifier', CDK_QUALIFIER, qualifier);
    for (const region of props.regions ?? []) requireFormat('regions', REGION_NAME, region);
    if (props.stages.length === 0) throw new Error('stages must name at least one stage');
    const regions = props.regions && props.regions.length > 0 ? props.regions : [this.region];

    this.oidcProviderArn = new GitHubOidcProvider(this, 'GitHubOidc', {
      existingProviderArn: props.existingOidcProviderArn,
    }).providerArn;
    const subject = (context: GitHubJobContext): string =>
      githubSubject(props.githubRepository, context, props.repositoryIds);

    const stageRoles = new Map<string, StageRoles>();
    for (const stage of props.stages) {
      const context: GitHubJobContext = { kind: 'environment', name: stage.environment };
      const deploy = this.githubRole(`${stage.environment}-deploy`, subject(context), {
        description: `payment-api pipeline, ${stage.environment}: cdk deploy of ${stage.stackName} through the CDK bootstrap roles only`,
        assumes: bootstrapRoleArns(this, qualifier, DEPLOY_ROLE_KINDS, regions),
      });
      const smoke = this.githubRole(`${stage.environment}-smoke`, subject(context), {
        description: `payment-api pipeline, ${stage.environment}: npm run smoke -- --stack ${stage.stackName}`,
      });
      this.grantSmokeTest(smoke, stage.stackName, regions);
      stageRoles.set(stage.environment, { deploy, smoke });
      new CfnOutput(this, `${stage.environment}DeployRoleArn`, {
        description: 'The deploy role: AWS_DEPLOY_ROLE_ARN of the GitHub environment of this stage',
        value: deploy.roleArn,
      });
      new CfnOutput(this, `${stage.environment}SmokeRoleArn`, {
        description: 'The smoke-test role: AWS_SMOKE_ROLE_ARN of the GitHub environment of this stage',
        value: smoke.roleArn,
      });
    }
    this.stageRoles = stageRoles;

    this.diffRole = this.githubRole('pull-request-diff', subject({ kind: 'pull-request' }), {
      description:
        'payment-api pipeline, pull requests: cdk diff through the CDK lookup roles only (read-only)',
      assumes: bootstrapRoleArns(this, qualifier, ['lookup'], regions),
    });
    new CfnOutput(this, 'DiffRoleArn', {
      description: "The pull requests' diff role: the repository variable AWS_DIFF_ROLE_ARN",
      value: this.diffRole.roleArn,
    });
  }

  /** A role for one subject; with `assumes`, allowed to assume exactly those roles and nothing else. */
  private githubRole(
    name: string,
    subject: string,
    options: { readonly description: string; readonly assumes?: readonly string[] },
  ): iam.Role {
    const { role } = new GitHubRole(this, name, {
      providerArn: this.oidcProviderArn,
      subject,
      roleName: `${PIPELINE_ROLE_PREFIX}-${name}`,
      description: options.description,
    });
    if (options.assumes !== undefined) {
      role.addToPrincipalPolicy(
        new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [...options.assumes] }),
      );
    }
    return role;
  }

  /**
   * What `npm run smoke -- --stack <stack>` reads: the stack's outputs, and the secrets the stack created (the keys,
   * and with shards the manifest and every shard), known by the tag CloudFormation puts on every resource it
   * creates, since their names are CloudFormation's.
   */
  private grantSmokeTest(role: iam.Role, stackName: string, regions: readonly string[]): void {
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['cloudformation:DescribeStacks'],
        resources: regions.map((region) =>
          this.formatArn({
            service: 'cloudformation',
            region,
            resource: 'stack',
            resourceName: `${stackName}/*`,
          }),
        ),
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['secretsmanager:GetSecretValue'],
        resources: regions.map((region) =>
          this.formatArn({
            service: 'secretsmanager',
            region,
            resource: 'secret',
            resourceName: '*',
            arnFormat: ArnFormat.COLON_RESOURCE_NAME,
          }),
        ),
        conditions: {
          StringEquals: { 'secretsmanager:ResourceTag/aws:cloudformation:stack-name': stackName },
        },
      }),
    );
    NagSuppressions.addResourceSuppressions(
      role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            "A stack's ARN ends in its id, which changes when the stack is re-created; the secrets' names are CloudFormation's: both are narrowed to the one stack (by name, and by the aws:cloudformation:stack-name tag).",
          appliesTo: [
            { regex: '/^Resource::arn:<AWS::Partition>:cloudformation:.*:stack\\/.*\\/\\*$/g' },
            { regex: '/^Resource::arn:<AWS::Partition>:secretsmanager:.*:secret:\\*$/g' },
          ],
        },
      ],
      true,
    );
  }
}
