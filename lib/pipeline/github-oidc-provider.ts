import * as iam from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { requireFormat, type TextFormat } from '../validation';
import { GITHUB_OIDC_URL, STS_AUDIENCE } from './github-subject';

export const OIDC_PROVIDER_ARN: TextFormat = {
  pattern: /^arn:aws[a-z-]*:iam::\d{12}:oidc-provider\/token\.actions\.githubusercontent\.com$/,
  description:
    "the ARN of the account's GitHub OIDC provider (arn:aws:iam::<account>:oidc-provider/token.actions.githubusercontent.com)",
};

export interface GitHubOidcProviderProps {
  /**
   * The account's GitHub OIDC provider, when it has one already: an account holds one provider per URL, so a
   * second would fail to create.
   * @default - a new provider for token.actions.githubusercontent.com, audience sts.amazonaws.com
   */
  readonly existingProviderArn?: string;
}

/** The IAM OIDC provider that lets GitHub Actions tokens be exchanged for role sessions: created, or imported. */
export class GitHubOidcProvider extends Construct {
  public readonly providerArn: string;

  constructor(scope: Construct, id: string, props: GitHubOidcProviderProps = {}) {
    super(scope, id);
    if (props.existingProviderArn !== undefined) {
      requireFormat('existingProviderArn', OIDC_PROVIDER_ARN, props.existingProviderArn);
      this.providerArn = props.existingProviderArn;
      return;
    }
    // The native resource, not the custom-resource provider: no Lambda in the stack. Without thumbprints IAM
    // trusts the issuer's certificate through its own store of root authorities.
    const provider = new iam.OidcProviderNative(this, 'Provider', {
      url: GITHUB_OIDC_URL,
      clientIds: [STS_AUDIENCE],
    });
    this.providerArn = provider.oidcProviderArn;
  }
}
