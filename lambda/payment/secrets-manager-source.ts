import { GetSecretValueCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { MalformedSecretError } from '../../shared/keys/keyring';
import type { SecretSource } from './key-cache';
import { createSecretsManagerClient, type CallBounds } from '../../shared/aws/bounded-client';

/**
 * Bounds on one fetch of the keys by the payment Lambda (and the local server, which runs the same handler).
 * In-region GetSecretValue answers in tens of milliseconds, so an attempt that has heard nothing for 600 ms is
 * abandoned and retried once, 50 ms later, on a fresh connection; the key cache spaces fetches itself, so a
 * throttling answer gets the same short pause. Worst case of one fetch: 600 + 50 + 600 = 1,250 ms, and never more
 * than the 1.5 s deadline: well inside the Lambda's 10 s time-out and API Gateway's 29 s.
 */
export const PAYMENT_CALL_BOUNDS: CallBounds = {
  maxAttempts: 2,
  connectionTimeoutMs: 500,
  attemptTimeoutMs: 600,
  retryDelayMs: 50,
  callDeadlineMs: 1_500,
};

/** Region, credentials and AWS_ENDPOINT_URL come from the standard AWS environment. */
export function createPaymentSecretsManagerClient(): SecretsManagerClient {
  return createSecretsManagerClient(PAYMENT_CALL_BOUNDS);
}

/**
 * Reads the secret's AWSCURRENT version. The stage is named explicitly: a request without it can return the
 * version that held AWSCURRENT before an UpdateSecretVersionStage (seen with moto; AWS documents AWSCURRENT
 * as what a stage-less request gets, so naming it costs nothing).
 */
export function secretsManagerSource(
  secretId: string,
  client: SecretsManagerClient = createPaymentSecretsManagerClient(),
): SecretSource {
  return {
    description: secretId,
    deadlineMs: PAYMENT_CALL_BOUNDS.callDeadlineMs,
    async fetchSecretString() {
      const output = await client.send(
        new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
      );
      if (output.SecretString === undefined) {
        throw new MalformedSecretError('secret has no SecretString (binary secrets are not supported)');
      }
      return output.SecretString;
    },
  };
}
