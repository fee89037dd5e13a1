/**
 * The `sub` claim of a GitHub Actions OIDC token, as the roles' trust policies match it exactly. Pure: no CDK.
 *
 * GitHub's default subject names the repository: `repo:<owner>/<repo>:environment:<name>`. With immutable subject
 * claims on (the default for repositories created or renamed from July 15, 2026; others opt in), each name carries
 * its numeric id, which GitHub never reuses: `repo:<owner>@<owner id>/<repo>@<repo id>:environment:<name>`. A role
 * trusting the name form could be assumed by whoever later takes a deleted or renamed owner's name.
 */
import type { TextFormat } from '../validation';

export const GITHUB_OIDC_ISSUER = 'token.actions.githubusercontent.com';
export const GITHUB_OIDC_URL = `https://${GITHUB_OIDC_ISSUER}`;
/** The audience aws-actions/configure-aws-credentials asks for. */
export const STS_AUDIENCE = 'sts.amazonaws.com';

/** `owner/repo` as GitHub allows them: an owner of up to 39 letters, digits or hyphens; a repository name. */
export const GITHUB_REPOSITORY: TextFormat = {
  pattern: /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,37}[A-Za-z0-9])?\/[A-Za-z0-9._-]{1,100}$/,
  description:
    '<owner>/<repository>, as in https://github.com/<owner>/<repository> (letters, digits, ".", "_" or "-")',
};

/** The owner's and the repository's numeric ids, `<owner id>/<repository id>`. */
export const GITHUB_REPOSITORY_IDS: TextFormat = {
  pattern: /^[1-9][0-9]{0,19}\/[1-9][0-9]{0,19}$/,
  description:
    '<owner id>/<repository id>, the numbers GitHub gives as github.repository_owner_id and github.repository_id',
};

export interface GitHubRepositoryIds {
  readonly ownerId: string;
  readonly repositoryId: string;
}

/** Which tokens a role accepts: jobs in one GitHub environment, or jobs run for a pull request. */
export type GitHubJobContext =
  { readonly kind: 'environment'; readonly name: string } | { readonly kind: 'pull-request' };

export function parseRepositoryIds(ids: string): GitHubRepositoryIds {
  const [ownerId = '', repositoryId = ''] = ids.split('/');
  return { ownerId, repositoryId };
}

/** The exact `sub` a token has for `context`, in the immutable form when the ids are given. */
export function githubSubject(
  repository: string,
  context: GitHubJobContext,
  ids?: GitHubRepositoryIds,
): string {
  const [owner = '', name = ''] = repository.split('/');
  const path = ids === undefined ? `${owner}/${name}` : `${owner}@${ids.ownerId}/${name}@${ids.repositoryId}`;
  const job = context.kind === 'environment' ? `environment:${context.name}` : 'pull_request';
  return `repo:${path}:${job}`;
}
