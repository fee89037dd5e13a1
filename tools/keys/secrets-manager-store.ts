import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  UpdateSecretVersionStageCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { createSecretsManagerClient, type CallBounds } from '../../shared/aws/bounded-client';
import { errorCode, errorMessage, errorName } from '../../shared/errors';
import { nonEmpty } from './args';
import { KeyStoreError, type KeyStore, type ReplaceOutcome, type Snapshot } from './key-store';

/**
 * Bounds on each call of an operator's command, looser than the payment Lambda's (PAYMENT_CALL_BOUNDS): it may
 * run far from the region, and nobody waits on an HTTP answer. Worst case per call: 3 attempts of at most 3 s each
 * plus the SDK's back-off, and never more than the 10 s deadline; a command makes at most 5 calls.
 */
export const CLI_CALL_BOUNDS: CallBounds = {
  maxAttempts: 3,
  connectionTimeoutMs: 2_000,
  attemptTimeoutMs: 3_000,
  callDeadlineMs: 10_000,
};

type Env = Readonly<Record<string, string | undefined>>;

/** The variables the SDK itself reads from the process, where an empty value must mean "not set". */
const SDK_READ_VARIABLES = ['AWS_REGION', 'AWS_PROFILE'] as const;

/**
 * A client configured from `env` rather than from the process, so the CLI can be run in-process with a given
 * environment. Region: AWS_REGION (or AWS_DEFAULT_REGION, as the AWS CLI reads it), else the profile's; endpoint:
 * AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL; credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/
 * AWS_SESSION_TOKEN when set, otherwise the SDK's default chain (AWS_PROFILE, shared files, SSO, instance roles).
 * An empty variable counts as unset, as the AWS CLI reads it.
 */
export function createCliSecretsManagerClient(env: Env): SecretsManagerClient {
  // Standard error carries one-line errors only; the SDK's notice about the Node versions of its future releases
  // is not about this tool. The SDK reads this from process.env when a client is built, so here, just before.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  // The SDK falls back to these in process.env when not given a value, and takes "" as a value ("Region not
  // accepted: region=\"\" is not a valid hostname component").
  for (const name of SDK_READ_VARIABLES) {
    if (process.env[name] === '') Reflect.deleteProperty(process.env, name);
  }
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_SECRETS_MANAGER) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const profile = nonEmpty(env.AWS_PROFILE);
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  return createSecretsManagerClient(CLI_CALL_BOUNDS, {
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(profile === undefined ? {} : { profile }),
    ...(accessKeyId === undefined || secretAccessKey === undefined
      ? {}
      : {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(sessionToken === undefined ? {} : { sessionToken }),
          },
        }),
  });
}

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * Node's socket errors carry a code; when the SDK had to wrap one (it does for errors from another realm, as
 * under jest) only the message keeps it ("connect ECONNREFUSED 127.0.0.1:4566").
 */
function networkErrorCode(error: unknown, message: string): string | undefined {
  const code = errorCode(error);
  if (code !== undefined) return NETWORK_ERROR_CODES.has(code) ? code : undefined;
  return [...NETWORK_ERROR_CODES].find((known) => new RegExp(`\\b${known}\\b`).test(message));
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? '';
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}

/** Problems of the caller's environment rather than of one secret: reported without naming the secret. */
function describeEnvironmentProblem(error: unknown): string | undefined {
  const message = errorMessage(error) ?? '';
  if (errorName(error) === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    return 'no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or use --file for a local key file)';
  }
  if (/region is missing|region="" is not a valid/i.test(message)) return 'no AWS region: set AWS_REGION';
  return undefined;
}

/**
 * One line about an SDK failure. AWS error messages name resources and actions, never secret values; ours are
 * cut to one short line anyway.
 */
export function describeAwsFailure(error: unknown): string {
  const message = errorMessage(error);
  if (message === undefined) return 'unexpected failure';
  const environmentProblem = describeEnvironmentProblem(error);
  if (environmentProblem !== undefined) return environmentProblem;
  const name = errorName(error) ?? 'Error';
  // Before the network codes: an attempt's time-out carries ETIMEDOUT too.
  if (name === 'TimeoutError' || name === 'AbortError' || name === 'RequestTimeout') {
    return 'Secrets Manager did not answer in time';
  }
  const networkCode = networkErrorCode(error, message);
  if (networkCode !== undefined) return `could not reach Secrets Manager (${networkCode})`;
  switch (name) {
    case 'ResourceNotFoundException':
      return 'secret not found (or it has no AWSCURRENT version)';
    case 'AccessDeniedException':
      return `access denied: ${firstLine(message)}`;
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
      return `AWS rejected the credentials (${name})`;
    case 'ThrottlingException':
      return 'Secrets Manager is throttling requests; try again shortly';
    case 'DecryptionFailure':
      return `the secret's KMS key cannot decrypt it: ${firstLine(message)}`;
    default:
      return `${name}: ${firstLine(message)}`;
  }
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

  constructor(
    private readonly secretId: string,
    private readonly client: SecretsManagerClient,
    private readonly newClientRequestToken: () => string = randomUUID,
  ) {
    this.description = `secret ${secretId}`;
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
      cleanupFailure === undefined ? undefined : this.leftoverPendingLabel(ours, cleanupFailure);
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
      return { status: 'failed', reason: describeAwsFailure(error), currentKnown: holder !== undefined };
    }
  }

  /** What is left behind when AWSPENDING could not be taken off `versionId`, and the one command that clears it. */
  private leftoverPendingLabel(versionId: string, why: string): string {
    return (
      `could not remove the AWSPENDING label from version ${versionId} of ${this.description} (${why}); ` +
      `a scheduled rotation will fail until it is removed: ${this.clearPendingCommand(versionId)}`
    );
  }

  private clearPendingCommand(versionId: string): string {
    return (
      `aws secretsmanager update-secret-version-stage --secret-id '${this.secretId}' ` +
      `--version-stage AWSPENDING --remove-from-version-id ${versionId}`
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
      const environmentProblem = describeEnvironmentProblem(error);
      if (environmentProblem !== undefined) throw new KeyStoreError(environmentProblem);
      const cleanupFailure = await this.removePendingLabel(token);
      const leftover =
        cleanupFailure === undefined
          ? ''
          : `; if the new version ${token} was stored after all, its AWSPENDING label could not be removed ` +
            `(${cleanupFailure}) and a scheduled rotation will fail until it is: ${this.clearPendingCommand(token)}`;
      throw new KeyStoreError(
        `could not write a new version of ${this.description}: ${describeAwsFailure(error)}; ` +
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
      return describeAwsFailure(error);
    }
  }

  private async guarded<T>(whatFailed: string, send: () => Promise<T>): Promise<T> {
    try {
      return await send();
    } catch (error) {
      const environmentProblem = describeEnvironmentProblem(error);
      throw new KeyStoreError(
        environmentProblem ?? `${whatFailed} ${this.description}: ${describeAwsFailure(error)}`,
      );
    }
  }
}
