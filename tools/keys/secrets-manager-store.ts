import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
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

/** The key CLI's way around missing credentials, for the one line that reports them. */
const CREDENTIALS_HINT = 'or use --file for a local key file';

function environmentProblem(error: unknown): string | undefined {
  return describeAwsEnvironmentProblem(error, CREDENTIALS_HINT);
}

function describeFailure(error: unknown): string {
  return describeAwsFailure(error, AWS_SERVICES.secretsManager);
}

/**
 * The key document in a Secrets Manager secret, edited with compare-and-swap:
 *
 * 1. read: GetSecretValue(VersionStage AWSCURRENT) gives the text and its VersionId.
 * 2. replace: PutSecretValue stores the new text as a new version labelled AWSPENDING (a fresh
 *    ClientRequestToken makes the SDK's own retries idempotent), so AWSCURRENT does not move yet; then
 *    UpdateSecretVersionStage moves AWSCURRENT to it with RemoveFromVersionId = the version read. If anyone moved
 *    AWSCURRENT since, Secrets Manager refuses that move; nothing changed. After any refused move one more
 *    GetSecretValue tells a conflict (AWSCURRENT is on another writer's version) from a real failure (still on
 *    the version read) and from a move that landed although its answer was lost (on ours).
 * 3. Either way, the AWSPENDING label is taken off our version, because Secrets Manager will not start a
 *    scheduled rotation while AWSPENDING sits on a version other than AWSCURRENT. So it is after a failed put
 *    too: a put whose answer was lost may have stored our version.
 *
 * Four calls per uncontended edit: GetSecretValue, PutSecretValue, UpdateSecretVersionStage × 2; five when the
 * move is refused.
 */
export class SecretsManagerStore implements KeyStore {
  readonly description: string;
  private region: Promise<string | undefined> | undefined;

  constructor(
    private readonly secretId: string,
    private readonly client: SecretsManagerClient,
    private readonly newClientRequestToken: () => string = randomUUID,
  ) {
    this.description = secretLabel(secretId);
  }

  /** The region the client resolved, for messages and the AWS CLI lines they give; asked once. */
  private regionUsed(): Promise<string | undefined> {
    this.region ??= resolvedRegion(this.client);
    return this.region;
  }

  async read(): Promise<Snapshot> {
    const output = await this.guarded('could not read', () =>
      this.client.send(new GetSecretValueCommand({ SecretId: this.secretId, VersionStage: 'AWSCURRENT' })),
    );
    if (output.SecretString === undefined) {
      throw new KeyStoreError(`${this.description} has no SecretString (binary secrets are not supported)`);
    }
    if (output.VersionId === undefined) {
      throw new KeyStoreError(`Secrets Manager returned no VersionId for ${this.description}`);
    }
    return { text: output.SecretString, version: output.VersionId };
  }

  async replace(expectedVersion: string, newText: string): Promise<ReplaceOutcome> {
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
    return { status: moved.status, warnings: leftover === undefined ? [] : [leftover] };
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
      const holder = await this.currentVersionId();
      if (holder === ours) return { status: 'replaced' };
      if (holder !== undefined && holder !== expectedVersion) return { status: 'conflict' };
      return { status: 'failed', reason: describeFailure(error), currentKnown: holder !== undefined };
    }
  }

  /** What is left behind when AWSPENDING could not be taken off `versionId`, and the one command that clears it. */
  private async leftoverPendingLabel(versionId: string, why: string): Promise<string> {
    return (
      `could not remove the AWSPENDING label from version ${versionId} of ${this.description} (${why}); ` +
      `a scheduled rotation will fail until it is removed: ${await this.clearPendingCommand(versionId)}`
    );
  }

  private async clearPendingCommand(versionId: string): Promise<string> {
    return awsCliCommand(
      'secretsmanager update-secret-version-stage',
      [
        ['--secret-id', this.secretId],
        ['--version-stage', 'AWSPENDING'],
        ['--remove-from-version-id', versionId],
      ],
      await this.regionUsed(),
    );
  }

  /**
   * Stores `newText` as a new version labelled AWSPENDING and returns its id; AWSCURRENT does not move. A failed
   * put may still have landed (a time-out or a dropped connection loses only the answer), which would leave
   * AWSPENDING on a version that is not AWSCURRENT and so block the next scheduled rotation: the label is taken
   * off our version (its id is the request token) before the failure is reported.
   */
  private async putPending(token: string, newText: string): Promise<string> {
    try {
      const output = await this.client.send(
        new PutSecretValueCommand({
          SecretId: this.secretId,
          SecretString: newText,
          ClientRequestToken: token,
          VersionStages: ['AWSPENDING'],
        }),
      );
      return output.VersionId ?? token;
    } catch (error) {
      // No credentials or no region: the request never left, so there is nothing to clean up.
      const problem = environmentProblem(error);
      if (problem !== undefined) throw new KeyStoreError(problem);
      const cleanupFailure = await this.removePendingLabel(token);
      const leftover =
        cleanupFailure === undefined
          ? ''
          : `; if the new version ${token} was stored after all, its AWSPENDING label could not be removed ` +
            `(${cleanupFailure}) and a scheduled rotation will fail until it is: ${await this.clearPendingCommand(token)}`;
      throw new KeyStoreError(
        `could not write a new version of ${this.description}: ${describeFailure(error)}; ` +
          `nothing was changed (AWSCURRENT untouched)${leftover}`,
      );
    }
  }

  /** The version AWSCURRENT is on, or undefined when that cannot be learned now. */
  private async currentVersionId(): Promise<string | undefined> {
    try {
      const output = await this.client.send(
        new GetSecretValueCommand({ SecretId: this.secretId, VersionStage: 'AWSCURRENT' }),
      );
      return output.VersionId;
    } catch {
      return undefined;
    }
  }

  /**
   * Best effort; returns why it failed, or undefined when the label is off our version. A concurrent writer's
   * PutSecretValue may already have moved AWSPENDING to its own version, which is fine (that writer removes it
   * in turn), and a put that never landed left no version at all: Secrets Manager refuses both, with
   * InvalidParameterException (label not attached; moto also for an unknown version) or ResourceNotFoundException.
   */
  private async removePendingLabel(versionId: string): Promise<string | undefined> {
    try {
      await this.client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: this.secretId,
          VersionStage: 'AWSPENDING',
          RemoveFromVersionId: versionId,
        }),
      );
      return undefined;
    } catch (error) {
      const name = errorName(error);
      if (name === 'InvalidParameterException' || name === 'ResourceNotFoundException') return undefined;
      return describeFailure(error);
    }
  }

  private async guarded<T>(whatFailed: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      throw new KeyStoreError(
        environmentProblem(error) ??
          describeSecretFailure(error, whatFailed, {
            secretId: this.secretId,
            region: await this.regionUsed(),
          }),
      );
    }
  }
}
