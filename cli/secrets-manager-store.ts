import { randomUUID } from 'node:crypto';
import {
  GetSecretValueCommand,
  PutSecretValueCommand,
  SecretsManagerClient,
  UpdateSecretVersionStageCommand,
} from '@aws-sdk/client-secrets-manager';
import { errorCode, errorMessage, errorName } from '../lambda/shared/errors';
import { nonEmpty } from './args';
import { KeyStoreError, type KeyStore, type ReplaceOutcome, type Snapshot } from './key-store';

/**
 * Bounds for an operator's command, looser than the Lambda's hot-path bounds (SECRETS_MANAGER_TIMEOUTS in
 * lambda/keys/secrets-manager-source.ts): nobody is waiting on an HTTP response, but a command must still end.
 * Worst case per call: 3 attempts × (2 s connect + 5 s response) plus back-off, cut at 20 s by the deadline.
 */
export const CLI_SECRETS_MANAGER_TIMEOUTS = {
  maxAttempts: 3,
  connectionTimeoutMs: 2_000,
  requestTimeoutMs: 5_000,
  callDeadlineMs: 20_000,
} as const;

type Env = Readonly<Record<string, string | undefined>>;

/**
 * A client configured from `env` rather than from the process, so the CLI can be run in-process with a given
 * environment. Region: AWS_REGION (or AWS_DEFAULT_REGION, as the AWS CLI reads it); endpoint:
 * AWS_ENDPOINT_URL_SECRETS_MANAGER or AWS_ENDPOINT_URL; credentials: AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN when set, otherwise the SDK's default
 * chain (AWS_PROFILE from `env`, shared files, SSO, instance roles).
 */
export function createCliSecretsManagerClient(env: Env): SecretsManagerClient {
  // Standard error carries one-line errors only; the SDK's notice about the Node versions of its future releases
  // is not about this tool. The SDK reads this from process.env when a client is built, so here, just before.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  const endpoint = nonEmpty(env.AWS_ENDPOINT_URL_SECRETS_MANAGER) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const profile = nonEmpty(env.AWS_PROFILE);
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  return new SecretsManagerClient({
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
    maxAttempts: CLI_SECRETS_MANAGER_TIMEOUTS.maxAttempts,
    requestHandler: {
      connectionTimeout: CLI_SECRETS_MANAGER_TIMEOUTS.connectionTimeoutMs,
      requestTimeout: CLI_SECRETS_MANAGER_TIMEOUTS.requestTimeoutMs,
    },
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
  if (/region is missing/i.test(message)) return 'no AWS region: set AWS_REGION';
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
  const networkCode = networkErrorCode(error, message);
  if (networkCode !== undefined) return `could not reach Secrets Manager (${networkCode})`;
  const name = errorName(error) ?? 'Error';
  switch (name) {
    case 'TimeoutError':
    case 'AbortError':
    case 'RequestTimeout':
      return 'Secrets Manager did not answer in time';
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
    const output = await this.guarded('could not read', (abortSignal) =>
      this.client.send(new GetSecretValueCommand({ SecretId: this.secretId, VersionStage: 'AWSCURRENT' }), {
        abortSignal,
      }),
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

    let status: ReplaceOutcome['status'] | KeyStoreError;
    try {
      await this.client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: this.secretId,
          VersionStage: 'AWSCURRENT',
          MoveToVersionId: ours,
          RemoveFromVersionId: expectedVersion,
        }),
        { abortSignal: AbortSignal.timeout(CLI_SECRETS_MANAGER_TIMEOUTS.callDeadlineMs) },
      );
      status = 'replaced';
    } catch (error) {
      // Which version holds AWSCURRENT now tells what happened, whatever the error's name: another writer's
      // (a conflict), ours (the move landed but its answer was lost), or still the one we read (a real failure).
      const holder = await this.currentVersionId();
      if (holder === ours) status = 'replaced';
      else if (holder !== undefined && holder !== expectedVersion) status = 'conflict';
      else {
        const outcome =
          holder === undefined
            ? 'AWSCURRENT was most likely not moved; run "list" to check'
            : 'AWSCURRENT was not moved, the secret is unchanged';
        status = new KeyStoreError(
          `could not move AWSCURRENT of ${this.description} to the new version: ${describeAwsFailure(error)}; ${outcome}`,
        );
      }
    }
    const cleanupFailure = await this.removePendingLabel(ours);
    if (status instanceof KeyStoreError) throw status;
    return {
      status,
      warnings:
        cleanupFailure === undefined
          ? []
          : [
              `could not remove the AWSPENDING label from version ${ours} of ${this.description} ` +
                `(${cleanupFailure}); a scheduled rotation will fail until it is removed`,
            ],
    };
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
        { abortSignal: AbortSignal.timeout(CLI_SECRETS_MANAGER_TIMEOUTS.callDeadlineMs) },
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
            `(${cleanupFailure}) and a scheduled rotation will fail until it is`;
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
        { abortSignal: AbortSignal.timeout(CLI_SECRETS_MANAGER_TIMEOUTS.callDeadlineMs) },
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
        { abortSignal: AbortSignal.timeout(CLI_SECRETS_MANAGER_TIMEOUTS.callDeadlineMs) },
      );
      return undefined;
    } catch (error) {
      const name = errorName(error);
      if (name === 'InvalidParameterException' || name === 'ResourceNotFoundException') return undefined;
      return describeAwsFailure(error);
    }
  }

  private async guarded<T>(whatFailed: string, send: (abortSignal: AbortSignal) => Promise<T>): Promise<T> {
    try {
      return await send(AbortSignal.timeout(CLI_SECRETS_MANAGER_TIMEOUTS.callDeadlineMs));
    } catch (error) {
      const environmentProblem = describeEnvironmentProblem(error);
      throw new KeyStoreError(
        environmentProblem ?? `${whatFailed} ${this.description}: ${describeAwsFailure(error)}`,
      );
    }
  }
}
