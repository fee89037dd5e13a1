import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceNotFoundException,
  UpdateSecretVersionStageCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { parseKeyDocument, serializeKeyDocument } from '../../shared/keys/key-document';
import { assertValidRotationPolicy, rotateAllApps, type RotationPolicy } from '../../shared/keys/rotation';
import { generateKey } from '../../shared/keys/key-material';
import { SECRET_MAX_BYTES, secretSize, type SecretSize } from '../../shared/keys/secret-size';
import { formatTimestamp } from '../../shared/keys/timestamp';
import { describeError, type Logger } from '../../shared/logger';
import {
  decideStep,
  isRotationStep,
  pendingVersionProblems,
  RotationError,
  STAGE,
  type RotationEvent,
  type RotationStep,
} from './rotation-rules';

export interface RotationHandlerOptions extends RotationPolicy {
  readonly client: SecretsManagerClient;
  readonly logger: Logger;
  /** The stack's key prefix, for fresh keys. Default: the default prefix (`pay`). */
  readonly keyPrefix?: string;
  /** Source of fresh keys; the CSPRNG-backed generateKey (with keyPrefix) unless a test needs known keys. */
  readonly generateKey?: () => string;
  /** The clock each step reads (epoch ms); Date.now unless a test needs a known time. */
  readonly now?: () => number;
}

export type RotationHandler = (event: RotationEvent) => Promise<void>;

/**
 * Secrets Manager would refuse the write anyway, with an error that says nothing of what to do; this one says it,
 * before anything is written. Rotation already removes expired keys of the apps it rotates, so the room must come
 * from elsewhere.
 */
function assertFits(secretString: string, secretId: string): SecretSize {
  const size = secretSize(secretString);
  if (!size.fits) {
    throw new RotationError(
      `the rotated secret would be ${size.bytes} bytes, ${size.overBy} over Secrets Manager's limit of ` +
        `${SECRET_MAX_BYTES}: shard ${secretId} is too full to rotate (${size.fillPercent.toFixed(1)}%), and nothing ` +
        "was written; remove apps and keys no longer used (the key CLI's prune removes expired ones), keep fewer keys per app (rotationKeep), " +
        'store digests (d:, 24 characters) rather than plain keys, or grow keyShards (docs/keys.md)',
    );
  }
  return size;
}

interface SecretVersion {
  readonly versionId: string;
  readonly secretString: string;
}

/**
 * Secrets Manager's four rotation steps for the keys secret. Every step first checks the secret's labels
 * (decideStep) and is idempotent per ClientRequestToken: Secrets Manager retries steps, so each one reads what
 * is there before it writes. Only the pure rules decide; this function does the I/O around them.
 */
export function createRotationHandler(options: RotationHandlerOptions): RotationHandler {
  const { client, logger } = options;
  const policy: RotationPolicy = { keep: options.keep, periodMs: options.periodMs };
  const newKey = options.generateKey ?? ((): string => generateKey(options.keyPrefix));
  const clock = options.now ?? Date.now;
  assertValidRotationPolicy(policy);

  async function readVersion(
    secretId: string,
    selector: { VersionStage: string; VersionId?: string },
  ): Promise<SecretVersion> {
    const output = await client.send(new GetSecretValueCommand({ SecretId: secretId, ...selector }));
    if (output.SecretString === undefined || output.VersionId === undefined) {
      throw new RotationError(
        `the ${selector.VersionStage} version has no SecretString (binary secrets are not supported)`,
      );
    }
    return { versionId: output.VersionId, secretString: output.SecretString };
  }

  const readCurrent = (secretId: string): Promise<SecretVersion> =>
    readVersion(secretId, { VersionStage: STAGE.current });

  const readPending = (secretId: string, token: string): Promise<SecretVersion> =>
    readVersion(secretId, { VersionId: token, VersionStage: STAGE.pending });

  /** The pending version's value, or undefined while Secrets Manager's placeholder for it is still empty. */
  async function readPendingIfWritten(secretId: string, token: string): Promise<SecretVersion | undefined> {
    try {
      return await readPending(secretId, token);
    } catch (error) {
      if (error instanceof ResourceNotFoundException) return undefined;
      throw error;
    }
  }

  /** Checks pending against current; returns the current version, which the check was made against. */
  async function checkPending(secretId: string, token: string): Promise<SecretVersion> {
    const current = await readCurrent(secretId);
    const pending = await readPending(secretId, token);
    const problems = pendingVersionProblems(current.secretString, pending.secretString, {
      policy,
      now: clock(),
    });
    if (problems.length > 0) {
      throw new RotationError(`the pending version ${token} may not become current: ${problems.join('; ')}`);
    }
    return current;
  }

  /**
   * After AWSCURRENT moved, AWSPENDING on the same version is a valid end state, but RotateSecret treats a
   * lingering AWSPENDING as a rotation in progress in some implementations, so it is removed. Best effort: the
   * rotation itself is already complete, and a failure here must not report it as failed.
   */
  async function removePendingLabel(
    secretId: string,
    token: string,
    fields: Record<string, string>,
  ): Promise<void> {
    try {
      await client.send(
        new UpdateSecretVersionStageCommand({
          SecretId: secretId,
          VersionStage: STAGE.pending,
          RemoveFromVersionId: token,
        }),
      );
    } catch (error) {
      logger.warn('could not remove the AWSPENDING label from the new current version', {
        ...fields,
        error: describeError(error),
      });
    }
  }

  const steps: Record<RotationStep, (event: RotationEvent, fields: Record<string, string>) => Promise<void>> =
    {
      async createSecret(event, fields) {
        const token = event.ClientRequestToken;
        // A retried createSecret finds its own earlier write and leaves it: new keys on every retry would hand
        // out keys that never become current.
        if ((await readPendingIfWritten(event.SecretId, token)) !== undefined) {
          logger.info('the pending version is already written', fields);
          return;
        }
        const current = await readCurrent(event.SecretId);
        const rotated = rotateAllApps(parseKeyDocument(current.secretString), policy, clock(), newKey);
        const secretString = serializeKeyDocument(rotated.document);
        const size = assertFits(secretString, event.SecretId);
        if (size.nearlyFull) {
          logger.warn('the keys secret is nearly full', {
            ...fields,
            secretBytes: size.bytes,
            fillPercent: Math.round(size.fillPercent),
          });
        }
        await client.send(
          new PutSecretValueCommand({
            SecretId: event.SecretId,
            ClientRequestToken: token,
            SecretString: secretString,
            VersionStages: [STAGE.pending],
            ...(event.RotationToken === undefined ? {} : { RotationToken: event.RotationToken }),
          }),
        );
        logger.info('wrote the pending version', {
          ...fields,
          baseVersionId: current.versionId,
          apps: rotated.document.size,
          rotatedApps: rotated.rotatedAppIds.length,
          skippedApps: rotated.skippedAppIds.length,
          skippedAppIds: rotated.skippedAppIds.join(','),
          expiredApps: rotated.expiredAppIds.length,
          expiredAppIds: rotated.expiredAppIds.join(','),
          prunedKeys: rotated.prunedKeys.length,
          prunedKeyIds: rotated.prunedKeys.map(({ appId, keyId }) => `${appId}/${keyId}`).join(','),
          supersededKeysExpireBy: formatTimestamp(rotated.supersededKeysExpireBy),
          keep: policy.keep,
          secretBytes: size.bytes,
        });
      },

      // The keys live only in this secret: there is no other system to tell about the new ones.
      setSecret(_event, fields) {
        logger.info('nothing to set: the keys live only in the secret', fields);
        return Promise.resolve();
      },

      async testSecret(event, fields) {
        const current = await checkPending(event.SecretId, event.ClientRequestToken);
        logger.info('the pending version may become current', {
          ...fields,
          currentVersionId: current.versionId,
        });
      },

      async finishSecret(event, fields) {
        const token = event.ClientRequestToken;
        // Checked again right before the move: if an operator changed the secret since createSecret, moving
        // AWSCURRENT would drop their change. RemoveFromVersionId names the version just checked, so a change
        // after the check makes the move fail instead.
        const current = await checkPending(event.SecretId, token);
        await client.send(
          new UpdateSecretVersionStageCommand({
            SecretId: event.SecretId,
            VersionStage: STAGE.current,
            MoveToVersionId: token,
            RemoveFromVersionId: current.versionId,
          }),
        );
        await removePendingLabel(event.SecretId, token, fields);
        logger.info('the pending version is now current', {
          ...fields,
          previousVersionId: current.versionId,
        });
      },
    };

  return async (event) => {
    const step: unknown = event.Step;
    if (!isRotationStep(step)) {
      logger.error('unknown rotation step', { secretId: event.SecretId });
      throw new RotationError('unknown rotation step');
    }
    let fields: Record<string, string> = {
      step,
      secretId: event.SecretId,
      versionId: event.ClientRequestToken,
    };
    try {
      const description = await client.send(new DescribeSecretCommand({ SecretId: event.SecretId }));
      fields = { ...fields, secretArn: description.ARN ?? event.SecretId };
      const decision = decideStep(
        {
          rotationEnabled: description.RotationEnabled === true,
          versionIdsToStages: description.VersionIdsToStages ?? {},
        },
        event.ClientRequestToken,
      );
      if (decision.action === 'skip') {
        logger.info('the version is already current: nothing to do', fields);
        if (step === 'finishSecret' && decision.pendingLabelLeft) {
          await removePendingLabel(event.SecretId, event.ClientRequestToken, fields);
        }
        return;
      }
      await steps[step](event, fields);
    } catch (error) {
      logger.error('rotation step failed', { ...fields, error: describeError(error) });
      throw error;
    }
  };
}
