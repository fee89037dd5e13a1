import { MalformedSecretError } from '../../shared/keys/keyring';
import type { SecretSource } from './key-cache';
import { AwsJsonClient, type AwsJsonClientOptions } from '../../shared/aws/aws-json-client';
import { AWS_JSON_SERVICES } from '../../shared/aws/aws-environment';
import type { CallBounds } from '../../shared/aws/call-bounds';

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

/** The payment Lambda's Secrets Manager client: the small client (shared/aws/aws-json-client.ts) with its bounds. */
export function createPaymentSecretsManagerClient(
  access: Pick<AwsJsonClientOptions, 'target' | 'credentials' | 'transport'>,
  bounds: CallBounds = PAYMENT_CALL_BOUNDS,
): AwsJsonClient {
  return new AwsJsonClient({ service: AWS_JSON_SERVICES.secretsManager, bounds, ...access });
}

/**
 * Reads the secret's AWSCURRENT version. The stage is named explicitly: a request without it can return the
 * version that held AWSCURRENT before an UpdateSecretVersionStage (seen with moto; AWS documents AWSCURRENT
 * as what a stage-less request gets, so naming it costs nothing). A read: sent again once after a failed attempt.
 */
export function secretsManagerSource(secretId: string, client: AwsJsonClient): SecretSource {
  return {
    description: secretId,
    deadlineMs: PAYMENT_CALL_BOUNDS.callDeadlineMs,
    async fetchSecretString() {
      const output = await client.call(
        'GetSecretValue',
        { SecretId: secretId, VersionStage: 'AWSCURRENT' },
        { idempotent: true },
      );
      if (typeof output.SecretString !== 'string') {
        throw new MalformedSecretError('secret has no SecretString (binary secrets are not supported)');
      }
      return output.SecretString;
    },
  };
}
