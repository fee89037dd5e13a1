/** The key store contract (test/support/key-store-contract.ts) against Secrets Manager, on moto. */
import { randomUUID } from 'node:crypto';
import {
  CreateSecretCommand,
  ListSecretsCommand,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { createOperatorSecretsManagerClient } from '../../../tools/common/aws-clients';
import { SecretsManagerStore } from '../../../tools/keys/secrets-manager-store';
import { describeKeyStoreContract } from '../../support/key-store-contract';
import { EMULATOR_CALL_BOUNDS, startMoto, type MotoServer } from '../../support/moto';

let moto: MotoServer;
let client: SecretsManagerClient;

beforeAll(async () => {
  moto = await startMoto();
  client = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  await client.send(new ListSecretsCommand({}));
});

afterAll(async () => {
  client.destroy();
  await moto.stop();
});

describeKeyStoreContract('a Secrets Manager secret', async (initial) => {
  const name = `payment-api-contract-${randomUUID()}`;
  await client.send(new CreateSecretCommand({ Name: name, SecretString: initial }));
  return {
    store: new SecretsManagerStore(name, client),
    // Through the CLI's own compare-and-swap, as a second operator writes (a plain put would leave AWSCURRENT on two
    // versions in moto).
    otherWriter: async (text) => {
      const other = new SecretsManagerStore(name, client);
      const outcome = await other.replace((await other.read()).version, text);
      if (outcome.status !== 'replaced') throw new Error('the other writer lost a race it should not have');
    },
  };
});
