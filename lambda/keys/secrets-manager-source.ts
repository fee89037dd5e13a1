import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { MalformedSecretError } from './keyring';
import type { SecretSource } from './key-cache';

/**
 * Bounds on one fetch. Worst case is capped by FETCH_DEADLINE_MS (5 s), well inside the Lambda's 10 s timeout
 * and API Gateway's 29 s: 2 attempts × (1 s connect + 2 s response) plus back-off would be longer, so the
 * deadline cuts it.
 */
export const SECRETS_MANAGER_TIMEOUTS = {
  maxAttempts: 2,
  connectionTimeoutMs: 1_000,
  requestTimeoutMs: 2_000,
  fetchDeadlineMs: 5_000,
} as const;

/** Region, credentials and AWS_ENDPOINT_URL come from the standard AWS environment. */
export function createSecretsManagerClient(): SecretsManagerClient {
  return new SecretsManagerClient({
    maxAttempts: SECRETS_MANAGER_TIMEOUTS.maxAttempts,
    requestHandler: {
      connectionTimeout: SECRETS_MANAGER_TIMEOUTS.connectionTimeoutMs,
      requestTimeout: SECRETS_MANAGER_TIMEOUTS.requestTimeoutMs,
    },
  });
}

/**
 * Reads the secret's AWSCURRENT version. The stage is named explicitly: a request without it can return the
 * version that held AWSCURRENT before an UpdateSecretVersionStage (seen with moto; AWS documents AWSCURRENT
 * as what a stage-less request gets, so naming it costs nothing).
 */
export function secretsManagerSource(
  secretId: string,
  client: SecretsManagerClient = createSecretsManagerClient(),
): SecretSource {
  return {
    description: secretId,
    async fetchSecretString() {
      const output = await client.send(
        new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
        {
          abortSignal: AbortSignal.timeout(SECRETS_MANAGER_TIMEOUTS.fetchDeadlineMs),
        },
      );
      if (output.SecretString === undefined) {
        throw new MalformedSecretError('secret has no SecretString (binary secrets are not supported)');
      }
      return output.SecretString;
    },
  };
}
