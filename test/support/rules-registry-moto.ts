/**
 * moto with Secrets Manager behind the rules proxy (the 65,536-byte limit, the version quota), the operator's
 * clients straight to moto, and the key CLI's environment through the proxy: what the key CLI's moto suites share.
 */
import { ListSecretsCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../../tools/common/aws-clients';
import { EMULATOR_CALL_BOUNDS, startMoto } from './moto';
import type { MotoClients } from './registry-moto';
import { startSecretsManagerRules, type SecretsManagerRulesProxy } from './secrets-manager-rules';

export interface RulesRegistryMoto {
  readonly proxy: SecretsManagerRulesProxy;
  readonly admin: SecretsManagerClient;
  readonly clients: Required<MotoClients>;
  /** The CLI's environment: Secrets Manager through the proxy, CloudFormation straight to moto. */
  readonly env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startRulesRegistryMoto(): Promise<RulesRegistryMoto> {
  const moto = await startMoto();
  const proxy = await startSecretsManagerRules(moto.port);
  const admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  const clients = {
    secretsManager: admin,
    cloudFormation: createOperatorCloudFormationClient(admin, moto.awsEnv, EMULATOR_CALL_BOUNDS),
  };
  // moto loads each service on its first call, for seconds: done here, once, so no test's call waits on it.
  await admin.send(new ListSecretsCommand({}));
  await clients.cloudFormation.send(new DescribeStacksCommand({}));
  return {
    proxy,
    admin,
    clients,
    env: { ...moto.awsEnv, AWS_ENDPOINT_URL_SECRETS_MANAGER: proxy.endpoint },
    async stop() {
      admin.destroy();
      clients.cloudFormation.destroy();
      await proxy.close();
      await moto.stop();
    },
  };
}
