import { Duration } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { GITHUB_OIDC_ISSUER, STS_AUDIENCE } from './github-subject';

export interface GitHubRoleProps {
  /** The GitHub OIDC provider's ARN. */
  readonly providerArn: string;
  /** The one `sub` a token must carry, matched exactly (StringEquals: no wildcard can widen it). */
  readonly subject: string;
  readonly roleName: string;
  readonly description: string;
}

/** A role that only GitHub Actions tokens for one subject, issued for STS, may assume. */
export class GitHubRole extends Construct {
  public readonly role: iam.Role;

  constructor(scope: Construct, id: string, props: GitHubRoleProps) {
    super(scope, id);
    this.role = new iam.Role(this, 'Role', {
      roleName: props.roleName,
      description: props.description,
      assumedBy: new iam.WebIdentityPrincipal(props.providerArn, {
        StringEquals: {
          [`${GITHUB_OIDC_ISSUER}:aud`]: STS_AUDIENCE,
          [`${GITHUB_OIDC_ISSUER}:sub`]: props.subject,
        },
      }),
      // A deploy of this stack takes minutes; an hour is the longest a job needs.
      maxSessionDuration: Duration.hours(1),
    });
  }
}
