import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
  ListSecretVersionIdsCommand,
  PutSecretValueCommand,
  UpdateSecretVersionStageCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { errorName } from '../../shared/errors';
import {
  awsCliCommand,
  describeAwsEnvironmentProblem,
  describeAwsFailure,
  describeSecretFailure,
  secretLabel,
} from '../common/aws-failure';
import { AWS_SERVICES, resolvedRegion } from '../common/aws-settings';
import { KeyStoreError, type KeyStore, type ReplaceOutcome, type Snapshot } from './key-store';
import {
  budgetRefusal,
  budgetWarning,
  writeBudget,
  type ListedVersion,
  type WriteBudget,
} from './write-budget';

/**
 * The staging label the key CLI's compare-and-swap puts on the version it writes until AWSCURRENT moves to it. Its
 * own, never AWSPENDING: that one belongs to a scheduled rotation under way, which fails if an edit takes it.
 */
export const CLI_STAGING_LABEL = 'payment-api-cli-pending';

/** The key CLI's way around missing credentials, for the one line that reports them. */
export const CREDENTIALS_HINT = 'or use --file for a local key file';

/**
 * The key document in a Secrets Manager secret, edited with compare-and-swap:
 *
 * 1. read: GetSecretValue(VersionStage AWSCURRENT) gives the text and its VersionId.
 * 2. before writing: ListSecretVersionIds (IncludeDeprecated) tells whether AWSCURRENT is still on the version
 *    read (if not, the race is lost before it costs a version: nothing is written) and how many versions the secret
 *    holds within its quota (write-budget.ts): a write that would fail is refused, one that nears the quota warned.
 * 3. replace: PutSecretValue stores the new text as a new version labelled CLI_STAGING_LABEL (a fresh
 *    ClientRequestToken makes the SDK's own retries idempotent), so AWSCURRENT does not move yet; then
 *    UpdateSecretVersionStage moves AWSCURRENT to it with RemoveFromVersionId = the version read. If anyone moved
 *    AWSCURRENT since, Secrets Manager refuses that move; nothing changed. After any refused move one more
 *    GetSecretValue tells a conflict (AWSCURRENT is on another writer's version) from a real failure (still on
 *    the version read) and from a move that landed although its answer was lost (on ours).
 * 4. Either way, our label is taken off our version, so that it does not keep that version from ever being
 *    removed. So it is after a failed put too: a put whose answer was lost may have stored our version. (The next
 *    CLI write would move a leftover label anyway: a label is on one version at a time.)
 *
 * Five calls per uncontended edit: GetSecretValue, ListSecretVersionIds, PutSecretValue,
 * UpdateSecretVersionStage × 2; six when the move is refused; two when the listing already shows another writer's
 * version.
 */
export class SecretsManagerStore implements KeyStore {
  readonly description: string;
  private region: Promise<string | undefined> | undefined;

  constructor(
    private readonly secretId: string,
    private readonly client: SecretsManagerClient,
    private readonly newClientRequestToken: () => string = randomUUID,
    private readonly now: () => number = Date.now,
    description?: string,
  ) {
    this.description = description ?? secretLabel(secretId);
  }

  /** The secret's versions, every page, deprecated ones included: what its version quota counts. */
  private async listVersions(): Promise<ListedVersion[]> {
    const versions: ListedVersion[] = [];
    let nextToken: string | undefined;
    do {
      const token = nextToken;
      const output = await this.guarded('could not list the versions of', () =>
        this.client.send(
          new ListSecretVersionIdsCommand({
            SecretId: this.secretId,
            IncludeDeprecated: true,
            MaxResults: 100,
            ...(token === undefined ? {} : { NextToken: token }),
          }),
        ),
      );
      for (const version of output.Versions ?? []) {
        if (version.VersionId === undefined) continue;
        versions.push({
          versionId: version.VersionId,
          createdAt: version.CreatedDate?.getTime(),
          stages: version.VersionStages ?? [],
        });
      }
      nextToken = output.NextToken === '' ? undefined : output.NextToken;
    } while (nextToken !== undefined);
    return versions;
  }

  async writeBudget(writes: number): Promise<WriteBudget> {
    return writeBudget(await this.listVersions(), this.now(), writes);
  }

  /** The region the client resolved, for messages and the AWS CLI lines they give; asked once. */
  private regionUsed(): Promise<string | undefined> {
    this.region ??= resolvedRegion(this.client);
    return this.region;
  }

  async read(): Promise<Snapshot> {
    const output = await this.guarded('could not read', () => this.getCurrent());
    if (output.SecretString === undefined) {
      throw new KeyStoreError(`${this.description} has no SecretString (binary secrets are not supported)`);
    }
    if (output.VersionId === undefined) {
      throw new KeyStoreError(`Secrets Manager returned no VersionId for ${this.description}`);
    }
    return { text: output.SecretString, version: output.VersionId };
  }

  async replace(expectedVersion: string, newText: string): Promise<ReplaceOutcome> {
    const versions = await this.listVersions();
    const current = versions.find((version) => version.stages.includes('AWSCURRENT'));
    if (current !== undefined && current.versionId !== expectedVersion) {
      return { status: 'conflict', warnings: [], unusedVersions: 0 };
    }
    const budget = writeBudget(versions, this.now());
    if (budget.verdict === 'refuse') throw new KeyStoreError(budgetRefusal(this.description, budget));
    const budgetWarnings = budget.verdict === 'warn' ? [budgetWarning(this.description, budget)] : [];

    const ours = await this.putPending(this.newClientRequestToken(), newText);
    const moved = await this.moveCurrent(ours, expectedVersion);
    const cleanupFailure = await this.removePendingLabel(ours);
    const leftover =
      cleanupFailure === undefined ? undefined : await this.leftoverPendingLabel(ours, cleanupFailure);
    if (moved.status === 'failed') {
      // With the label left behind the secret is not "unchanged": say what is left and how to clear it.
      const current = moved.currentKnown
        ? 'AWSCURRENT was not moved'
        : 'AWSCURRENT was most likely not moved (run "list" to check)';
      const outcome =
        leftover !== undefined
          ? `${current}; ${leftover}`
          : moved.currentKnown
            ? `${current}, the secret is unchanged`
            : 'AWSCURRENT was most likely not moved; run "list" to check';
      throw new KeyStoreError(
        `could not move AWSCURRENT of ${this.description} to the new version: ${moved.reason}; ${outcome}`,
      );
    }
    const warnings = leftover === undefined ? [] : [leftover];
    if (moved.status === 'conflict') return { status: 'conflict', warnings, unusedVersions: 1 };
    return { status: 'replaced', warnings: [...warnings, ...budgetWarnings] };
  }

  /**
   * Moves AWSCURRENT from `expectedVersion` to `ours`. After a refused move, which version holds AWSCURRENT now
   * tells what happened, whatever the error's name: another writer's (a conflict), ours (the move landed but its
   * answer was lost), or still the one we read (a real failure).
   */
  private async moveCurrent(
    ours: string,
    expectedVersion: string,
  ): Promise<
    | { readonly status: ReplaceOutcome['status'] }
    | { readonly status: 'failed'; readonly reason: string; readonly currentKnown: boolean }
  > {
    try {
      await this.client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: this.secretId,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: ours,
          RemoveFromVersionId: expectedVersion,
        }),
      );
      return { status: 'replaced' };
    } catch (error) {
      // Undefined when that cannot be learned now.
      const holder = (await this.getCurrent().catch(() => undefined))?.VersionId;
      if (holder === ours) return { status: 'replaced' };
      if (holder !== undefined && holder !== expectedVersion) return { status: 'conflict' };
      return {
        status: 'failed',
        reason: describeAwsFailure(error, AWS_SERVICES.secretsManager),
        currentKnown: holder !== undefined,
      };
    }
  }

  /** What is left behind when our label could not be taken off `versionId`, and the one command that clears it. */
  private async leftoverPendingLabel(versionId: string, why: string): Promise<string> {
    return (
      `could not remove the ${CLI_STAGING_LABEL} label from version ${versionId} of ${this.description} (${why}); ` +
      `it keeps that version from being removed until the next edit moves it, or: ${await this.clearPendingCommand(versionId)}`
    );
  }

  private async clearPendingCommand(versionId: string): Promise<string> {
    return awsCliCommand(
      'secretsmanager update-secret-version-stage',
      [
        ['--secret-id', this.secretId],
        ['--version-stage', CLI_STAGING_LABEL],
        ['--remove-from-version-id', versionId],
      ],
      await this.regionUsed(),
    );
  }

  /**
   * Stores `newText` as a new version labelled CLI_STAGING_LABEL and returns its id; AWSCURRENT does not move. A
   * failed put may still have landed (a time-out or a dropped connection loses only the answer), which would leave
   * our label on a version that is not AWSCURRENT: the label is taken off our version (its id is the request
   * token) before the failure is reported.
   */
  private async putPending(token: string, newText: string): Promise<string> {
    try {
      const output = await this.client.send(
        new PutSecretValueCommand({
          SecretId: this.secretId,
          SecretString: newText,
          ClientRequestToken: token,
          VersionStages: [CLI_STAGING_LABEL],
        }),
      );
      return output.VersionId ?? token;
    } catch (error) {
      // No credentials or no region: the request never left, so there is nothing to clean up.
      const problem = describeAwsEnvironmentProblem(error, CREDENTIALS_HINT);
      if (problem !== undefined) throw new KeyStoreError(problem);
      const cleanupFailure = await this.removePendingLabel(token);
      const leftover =
        cleanupFailure === undefined
          ? ''
          : `; if the new version ${token} was stored after all, its ${CLI_STAGING_LABEL} label could not be ` +
            `removed (${cleanupFailure}); to remove it: ${await this.clearPendingCommand(token)}`;
      throw new KeyStoreError(
        `could not write a new version of ${this.description}: ${describeAwsFailure(error, AWS_SERVICES.secretsManager)}; ` +
          `nothing was changed (AWSCURRENT untouched)${leftover}`,
      );
    }
  }

  private async getCurrent() {
    return await this.client.send(
      new GetSecretValueCommand({ SecretId: this.secretId, VersionStage: 'AWSCURRENT' }),
    );
  }

  /**
   * Best effort; returns why it failed, or undefined when the label is off our version. A concurrent writer's
   * PutSecretValue may already have moved the label to its own version, which is fine (that writer removes it
   * in turn), and a put that never landed left no version at all: Secrets Manager refuses both, with
   * InvalidParameterException (label not attached; moto also for an unknown version) or ResourceNotFoundException.
   */
  private async removePendingLabel(versionId: string): Promise<string | undefined> {
    try {
      await this.client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: this.secretId,
          VersionStage: CLI_STAGING_LABEL,
          RemoveFromVersionId: versionId,
        }),
      );
      return undefined;
    } catch (error) {
      const name = errorName(error);
      if (name === 'InvalidParameterException' || name === 'ResourceNotFoundException') return undefined;
      return describeAwsFailure(error, AWS_SERVICES.secretsManager);
    }
  }

  private async guarded<T>(whatFailed: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw new KeyStoreError(
        describeAwsEnvironmentProblem(error, CREDENTIALS_HINT) ??
          describeSecretFailure(error, whatFailed, {
            secretId: this.secretId,
            region: await this.regionUsed(),
          }),
      );
    }
  }
}
