import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { addCallDeadline, boundedClientConfig, type CallBounds } from '../../shared/aws/bounded-client';
import {
  AWS_SERVICES,
  createOperatorSecretsManagerClient,
  OPERATOR_CALL_BOUNDS,
  readAwsClientSettings,
} from '../common/aws-settings';
import type { Env } from '../common/tool-io';

export interface SmokeAwsClients {
  readonly secretsManager: SecretsManagerClient;
  readonly cloudFormation: CloudFormationClient;
}

/**
 * The two clients --stack needs, from the operator's environment (tools/common/aws-settings.ts), every call
 * bounded by `bounds`. CloudFormation's client takes the Secrets Manager client's resolved region and
 * credentials: one identity, one region, one resolution of a profile or SSO session. Each service keeps its own
 * endpoint (AWS_ENDPOINT_URL_CLOUDFORMATION, AWS_ENDPOINT_URL_SECRETS_MANAGER, else AWS_ENDPOINT_URL).
 */
export function createSmokeAwsClients(env: Env, bounds: CallBounds = OPERATOR_CALL_BOUNDS): SmokeAwsClients {
  const secretsManager = createOperatorSecretsManagerClient(env, bounds);
  const { endpoint } = readAwsClientSettings(env, AWS_SERVICES.cloudFormation);
  const cloudFormation = new CloudFormationClient({
    region: secretsManager.config.region,
    credentials: secretsManager.config.credentials,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...boundedClientConfig(bounds),
  });
  addCallDeadline(cloudFormation, bounds.callDeadlineMs);
  return { secretsManager, cloudFormation };
}
