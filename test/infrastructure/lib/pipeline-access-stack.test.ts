import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import {
  PIPELINE_ACCESS_STACK_NAME,
  PipelineAccessStack,
  type PipelineAccessStackProps,
} from '../../../lib/pipeline-access-stack';
import { resourcesOf, unbundledApp } from '../../support/construct-template';
import { sharedAppStack } from '../bin/app';

const REPOSITORY = 'octo-org/payment-api';
const OIDC = 'token.actions.githubusercontent.com';
const STAGES = [
  { environment: 'staging', stackName: 'PaymentApi-staging' },
  { environment: 'production', stackName: 'PaymentApi-production' },
];

interface Statement {
  readonly Effect: string;
  readonly Action: string | string[];
  readonly Resource?: unknown;
  readonly Principal?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

function accessStack(props: Partial<PipelineAccessStackProps> = {}): Template {
  const app = unbundledApp();
  return Template.fromStack(
    new PipelineAccessStack(app, PIPELINE_ACCESS_STACK_NAME, {
      githubRepository: REPOSITORY,
      stages: STAGES,
      ...props,
    }),
  );
}

/** The role of that name, its trust statement and the statements of its policy. */
function role(template: Template, roleName: string): { trust: Statement; policy: Statement[] } {
  const [[logicalId, found] = []] = Object.entries(resourcesOf(template, 'AWS::IAM::Role')).filter(
    ([, resource]) => resource.Properties.RoleName === roleName,
  );
  if (logicalId === undefined || found === undefined) throw new Error(`no role ${roleName}`);
  const trust = (found.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement;
  expect(trust).toHaveLength(1);
  const policies = Object.values(resourcesOf(template, 'AWS::IAM::Policy')).filter((policy) =>
    (policy.Properties.Roles as unknown[]).some(
      (ref) => JSON.stringify(ref) === JSON.stringify({ Ref: logicalId }),
    ),
  );
  const policy = policies.flatMap(
    (each) => (each.Properties.PolicyDocument as { Statement: Statement[] }).Statement,
  );
  return { trust: trust[0] as Statement, policy };
}

/** A CloudFormation value as text, `${AWS::AccountId}` for a Ref, so ARNs built with Fn::Join read as one string. */
function text(value: unknown): string {
  if (typeof value === 'string') return value;
  const object = value as { Ref?: string; 'Fn::Join'?: [string, unknown[]] };
  if (object.Ref !== undefined) return `\${${object.Ref}}`;
  if (object['Fn::Join'] !== undefined) return object['Fn::Join'][1].map(text).join(object['Fn::Join'][0]);
  return JSON.stringify(value);
}

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [value];
}

const BOOTSTRAP = (kind: string, qualifier = 'hnb659fds', region = '${AWS::Region}'): string =>
  `arn:\${AWS::Partition}:iam::\${AWS::AccountId}:role/cdk-${qualifier}-${kind}-role-\${AWS::AccountId}-${region}`;

describe('PipelineAccessStack', () => {
  const template = accessStack();

  it('creates the GitHub OIDC provider for the STS audience', () => {
    template.resourceCountIs('AWS::IAM::OIDCProvider', 1);
    template.hasResourceProperties('AWS::IAM::OIDCProvider', {
      Url: `https://${OIDC}`,
      ClientIdList: ['sts.amazonaws.com'],
    });
  });

  it.each(['staging', 'production'])(
    'lets only jobs of the %s environment assume its roles: aud sts.amazonaws.com and that exact sub',
    (stage) => {
      for (const kind of ['deploy', 'smoke']) {
        const { trust } = role(template, `PaymentApiPipeline-${stage}-${kind}`);

        expect(trust.Action).toBe('sts:AssumeRoleWithWebIdentity');
        expect(trust.Principal).toEqual({
          Federated: { Ref: Object.keys(resourcesOf(template, 'AWS::IAM::OIDCProvider'))[0] },
        });
        expect(trust.Condition).toEqual({
          StringEquals: {
            [`${OIDC}:aud`]: 'sts.amazonaws.com',
            [`${OIDC}:sub`]: `repo:${REPOSITORY}:environment:${stage}`,
          },
        });
      }
    },
  );

  it('lets each deploy role assume the deploy, file-publishing and lookup roles of the bootstrap qualifier, and nothing else', () => {
    for (const stage of ['staging', 'production']) {
      const { policy } = role(template, `PaymentApiPipeline-${stage}-deploy`);

      expect(policy).toHaveLength(1);
      expect(policy[0]?.Effect).toBe('Allow');
      expect(policy[0]?.Action).toBe('sts:AssumeRole');
      expect(policy[0]?.Condition).toBeUndefined();
      expect(listOf(policy[0]?.Resource).map(text).sort()).toEqual(
        [BOOTSTRAP('deploy'), BOOTSTRAP('file-publishing'), BOOTSTRAP('lookup')].sort(),
      );
    }
  });

  it("lets the pull requests' diff role assume only the lookup role, for pull_request tokens only", () => {
    const { trust, policy } = role(template, 'PaymentApiPipeline-pull-request-diff');

    expect(trust.Condition?.StringEquals?.[`${OIDC}:sub`]).toBe(`repo:${REPOSITORY}:pull_request`);
    expect(policy.map(({ Effect, Action, Condition }) => ({ Effect, Action, Condition }))).toEqual([
      { Effect: 'Allow', Action: 'sts:AssumeRole', Condition: undefined },
    ]);
    expect(listOf(policy[0]?.Resource).map(text)).toEqual([BOOTSTRAP('lookup')]);
  });

  it.each(['staging', 'production'])(
    "lets the %s smoke-test role read only its own stack's outputs and the secrets that stack created",
    (stage) => {
      const { policy } = role(template, `PaymentApiPipeline-${stage}-smoke`);

      expect(
        policy.map(({ Effect, Action, Resource, Condition }) => [Effect, Action, text(Resource), Condition]),
      ).toEqual([
        [
          'Allow',
          'cloudformation:DescribeStacks',
          `arn:\${AWS::Partition}:cloudformation:\${AWS::Region}:\${AWS::AccountId}:stack/PaymentApi-${stage}/*`,
          undefined,
        ],
        [
          'Allow',
          'secretsmanager:GetSecretValue',
          'arn:${AWS::Partition}:secretsmanager:${AWS::Region}:${AWS::AccountId}:secret:*',
          {
            StringEquals: {
              'secretsmanager:ResourceTag/aws:cloudformation:stack-name': `PaymentApi-${stage}`,
            },
          },
        ],
      ]);
      // No policy beside the five roles' (two deploy, two smoke-test, the diff role), each proved whole here.
      template.resourceCountIs('AWS::IAM::Policy', 5);
    },
  );

  it('never matches sub with a wildcard: StringEquals only, and no * or ? in any sub, production above all', () => {
    const trusts = Object.values(resourcesOf(template, 'AWS::IAM::Role')).map(
      (resource) => (resource.Properties.AssumeRolePolicyDocument as { Statement: Statement[] }).Statement[0],
    );
    const subjects = trusts.map((trust) => trust?.Condition?.StringEquals?.[`${OIDC}:sub`]);

    expect(trusts.map((trust) => Object.keys(trust?.Condition ?? {}))).toEqual(
      trusts.map(() => ['StringEquals']),
    );
    expect(subjects.filter((sub) => typeof sub !== 'string' || /[*?]/.test(sub))).toEqual([]);
    expect(subjects.filter((sub) => String(sub).endsWith(':environment:production'))).toEqual([
      `repo:${REPOSITORY}:environment:production`,
      `repo:${REPOSITORY}:environment:production`,
    ]);
  });

  it('outputs each role ARN, for the repository variables', () => {
    expect(Object.keys(template.findOutputs('*')).sort()).toEqual(
      [
        'DiffRoleArn',
        'productionDeployRoleArn',
        'productionSmokeRoleArn',
        'stagingDeployRoleArn',
        'stagingSmokeRoleArn',
      ].sort(),
    );
  });
});

describe('PipelineAccessStack options', () => {
  it("trusts GitHub's immutable subject, with the owner's and repository's ids, when the ids are given", () => {
    const template = accessStack({ repositoryIds: { ownerId: '123456', repositoryId: '456789' } });

    expect(role(template, 'PaymentApiPipeline-production-deploy').trust.Condition?.StringEquals).toEqual({
      [`${OIDC}:aud`]: 'sts.amazonaws.com',
      [`${OIDC}:sub`]: 'repo:octo-org@123456/payment-api@456789:environment:production',
    });
    expect(
      role(template, 'PaymentApiPipeline-pull-request-diff').trust.Condition?.StringEquals?.[`${OIDC}:sub`],
    ).toBe('repo:octo-org@123456/payment-api@456789:pull_request');
  });

  it('imports an existing OIDC provider instead of creating a second', () => {
    const arn = 'arn:aws:iam::123456789012:oidc-provider/token.actions.githubusercontent.com';
    const template = accessStack({ existingOidcProviderArn: arn });

    template.resourceCountIs('AWS::IAM::OIDCProvider', 0);
    expect(role(template, 'PaymentApiPipeline-staging-deploy').trust.Principal).toEqual({ Federated: arn });
  });

  it('uses the bootstrap roles of the qualifier and Regions it is given', () => {
    const template = accessStack({ cdkQualifier: 'pay1', regions: ['eu-west-1', 'us-east-1'] });

    expect(
      listOf(role(template, 'PaymentApiPipeline-staging-deploy').policy[0]?.Resource).map(text).sort(),
    ).toEqual(
      ['eu-west-1', 'us-east-1']
        .flatMap((region) =>
          ['deploy', 'file-publishing', 'lookup'].map((kind) => BOOTSTRAP(kind, 'pay1', region)),
        )
        .sort(),
    );
  });

  it('makes one deploy and one smoke-test role per stage it is given', () => {
    const template = accessStack({
      stages: [
        ...STAGES.slice(0, 1),
        { environment: 'gamma', stackName: 'PaymentApi-gamma' },
        ...STAGES.slice(1),
      ],
    });

    expect(
      Object.values(resourcesOf(template, 'AWS::IAM::Role'))
        .map((resource) => resource.Properties.RoleName)
        .sort(),
    ).toEqual(
      ['staging', 'gamma', 'production']
        .flatMap((stage) => [`PaymentApiPipeline-${stage}-deploy`, `PaymentApiPipeline-${stage}-smoke`])
        .concat('PaymentApiPipeline-pull-request-diff')
        .sort(),
    );
  });

  it.each<[string, Partial<PipelineAccessStackProps>, string]>([
    [
      'a repository that is not owner/name',
      { githubRepository: 'payment-api' },
      'githubRepository must be <owner>/<repository>',
    ],
    ['a qualifier cdk bootstrap would refuse', { cdkQualifier: 'Not_Valid' }, 'cdkQualifier must be 1 to 10'],
    ['no stage', { stages: [] }, 'stages must name at least one stage'],
  ])('refuses %s', (_case, props, message) => {
    expect(() => accessStack(props)).toThrow(message);
  });
});

describe('cdk-nag AwsSolutions checks on the pipeline access stack, as the app makes it', () => {
  const context = { githubRepository: REPOSITORY, githubRepositoryIds: '123456/456789' };
  const stack = sharedAppStack(context, PIPELINE_ACCESS_STACK_NAME);

  it('leaves no unacknowledged error or warning', () => {
    const findings = [
      ...Annotations.fromStack(stack).findError('*', Match.stringLikeRegexp('AwsSolutions-.*')),
      ...Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('AwsSolutions-.*')),
    ];

    expect(findings.map((finding) => `${finding.id}: ${JSON.stringify(finding.entry.data)}`)).toEqual([]);
  });

  it("acknowledges only the smoke-test roles' stack id and secret name wildcards (IAM5), on them alone", () => {
    const suppressed = Object.entries(resourcesOf(Template.fromStack(stack)))
      .filter(([, resource]) => resource.Metadata?.cdk_nag !== undefined)
      .map(([id, resource]) => [id, resource.Metadata?.cdk_nag?.rules_to_suppress.map((rule) => rule.id)]);

    expect(suppressed.map(([id]) => String(id).replace(/[A-F0-9]{8}$/, '')).sort()).toEqual([
      'productionsmokeRole',
      'productionsmokeRoleDefaultPolicy',
      'stagingsmokeRole',
      'stagingsmokeRoleDefaultPolicy',
    ]);
    expect(suppressed.map(([, ids]) => ids)).toEqual(suppressed.map(() => ['AwsSolutions-IAM5']));
  });
});
