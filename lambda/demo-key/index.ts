/**
 * Demo key custom resource entry point: CloudFormation invokes it when a stack whose demo app does not live in shard 0
 * is created (lib/demo-key-home.ts). Region and credentials come from the Lambda environment.
 */
import { GetSecretValueCommand, PutSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { MalformedSecretError } from '../../shared/keys/keyring';
import { createSecretsManagerClient } from '../../shared/aws/bounded-client';
import { createJsonLogger } from '../../shared/logger';
import { ROTATION_CALL_BOUNDS } from '../rotation/settings';
import { respondToCloudFormation } from './cloudformation-response';
import { createDemoKeyHandler } from './create-demo-key-handler';

// The rotation function's bounds: the same two calls on the same secrets, from a function with time to spare.
const client = createSecretsManagerClient(ROTATION_CALL_BOUNDS);

export const handler = createDemoKeyHandler({
  secrets: {
    async read(secretId) {
      const output = await client.send(
        new GetSecretValueCommand({ SecretId: secretId, VersionStage: 'AWSCURRENT' }),
      );
      if (output.SecretString === undefined)
        throw new MalformedSecretError(`secret ${secretId} has no SecretString`);
      return output.SecretString;
    },
    async write(secretId, secretString, token) {
      await client.send(
        new PutSecretValueCommand({
          SecretId: secretId,
          SecretString: secretString,
          ClientRequestToken: token,
        }),
      );
    },
  },
  respond: respondToCloudFormation,
  logger: createJsonLogger('info'),
});
