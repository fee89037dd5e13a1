import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { CallBounds } from '../../shared/aws/bounded-client';
import { OPERATOR_CALL_BOUNDS } from '../common/aws-settings';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../common/aws-clients';
import type { Env } from '../common/tool-io';

export interface SmokeAwsClients {
  readonly secretsManager: SecretsManagerClient;
  readonly cloudFormation: CloudFormationClient;
}

/**
 * The two clients --stack needs, from the operator's environment (tools/common/aws-settings.ts), every call
 * bounded by `bounds`; CloudFormation's takes the Secrets Manager client's region and credentials.
 */
export function createSmokeAwsClients(env: Env, bounds: CallBounds = OPERATOR_CALL_BOUNDS): SmokeAwsClients {
  const secretsManager = createOperatorSecretsManagerClient(env, bounds);
  return { secretsManager, cloudFormation: createOperatorCloudFormationClient(secretsManager, env, bounds) };
}
