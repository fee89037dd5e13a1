import { MalformedSecretError } from '../../shared/keys/keyring';
import type { SecretSource } from './key-cache';
import {
  AwsJsonClient,
  type AttemptBounds,
  type AwsJsonClientOptions,
} from '../../shared/aws/aws-json-client';
import { AWS_JSON_SERVICES } from '../../shared/aws/aws-environment';

/**
 * One fetch of the keys by the payment Lambda (and the local server, which runs the same handler) has this long,
 * every attempt included: the caller's budget, carried by one AbortSignal down to the transport.
 */
export const KEY_FETCH_BUDGET_MS = 1_500;

/**
 * How the fetch's attempts are made. In-region GetSecretValue answers in tens of milliseconds, so an attempt whose
 * connection has been silent for 600 ms is abandoned and retried once, 50 ms later, on a fresh connection; the key
 * cache spaces fetches itself, so a throttling answer gets the same short pause. Worst case of one fetch: 600 + 50
 * + 600 = 1,250 ms (a connection made at once), and never more than KEY_FETCH_BUDGET_MS: well inside the Lambda's
 * 10 s time-out and API Gateway's 29 s.
 */
export const KEY_FETCH_ATTEMPTS: AttemptBounds = {
  maxAttempts: 2,
  connectionTimeoutMs: 500,
  socketTimeoutMs: 600,
  retryDelayMs: 50,
};

/** The payment Lambda's Secrets Manager client: the small client (shared/aws/aws-json-client.ts). */
export function createPaymentSecretsManagerClient(
  access: Pick<AwsJsonClientOptions, 'target' | 'credentials' | 'transport'>,
  bounds: AttemptBounds = KEY_FETCH_ATTEMPTS,
): AwsJsonClient {
  return new AwsJsonClient({ service: AWS_JSON_SERVICES.secretsManager, bounds, ...access });
}

/**
 * Reads the secret's AWSCURRENT version. The stage is named explicitly: a request without it can return the
 * version that held AWSCURRENT before an UpdateSecretVersionStage (seen with moto; AWS documents AWSCURRENT
 * as what a stage-less request gets, so naming it costs nothing). A read: sent again once after a failed attempt.
 * Each fetch has `budgetMs` (KEY_FETCH_BUDGET_MS; longer only where a test or the local server says so explicitly,
 * against an emulator).
 */
export function secretsManagerSource(
  secretId: string,
  client: AwsJsonClient,
  budgetMs: number = KEY_FETCH_BUDGET_MS,
): SecretSource {
  return {
    description: secretId,
    deadlineMs: budgetMs,
    async fetchSecretString() {
      const output = await client.call(
        'GetSecretValue',
        { SecretId: secretId, VersionStage: 'AWSCURRENT' },
        { idempotent: true, signal: AbortSignal.timeout(budgetMs) },
      );
      if (typeof output.SecretString !== 'string') {
        throw new MalformedSecretError('secret has no SecretString (binary secrets are not supported)');
      }
      return output.SecretString;
    },
  };
}
