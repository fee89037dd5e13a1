import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  addCallDeadline,
  boundedClientConfig,
  createSecretsManagerClient,
  type CallBounds,
} from '../../shared/aws/bounded-client';
import {
  AWS_SERVICES,
  OPERATOR_CALL_BOUNDS,
  operatorClientSettings,
  readAwsClientSettings,
} from './aws-settings';
import type { Env } from './tool-io';

/*
 * The tools' SDK clients, built from the settings aws-settings.ts reads: apart from them, so that what only reads
 * settings, names a service or describes a failure does not load the SDK.
 */

/**
 * A bounded client configured from `env` rather than from the process, so a tool can run in-process with a
 * given environment. `bounds` defaults to the operator's; tests against an emulator on a loaded machine pass
 * their own.
 */
export function createOperatorSecretsManagerClient(
  env: Env,
  bounds: CallBounds = OPERATOR_CALL_BOUNDS,
): SecretsManagerClient {
  return createSecretsManagerClient(bounds, operatorClientSettings(env, AWS_SERVICES.secretsManager));
}

/**
 * A CloudFormation client for reading a stack's outputs, bounded like `secretsManager` and taking its resolved
 * region and credentials: one identity, one region, one resolution of a profile or SSO session. It keeps its own
 * endpoint (AWS_ENDPOINT_URL_CLOUDFORMATION, else AWS_ENDPOINT_URL).
 */
export function createOperatorCloudFormationClient(
  secretsManager: SecretsManagerClient,
  env: Env,
  bounds: CallBounds = OPERATOR_CALL_BOUNDS,
): CloudFormationClient {
  const { endpoint } = readAwsClientSettings(env, AWS_SERVICES.cloudFormation);
  const cloudFormation = new CloudFormationClient({
    region: secretsManager.config.region,
    credentials: secretsManager.config.credentials,
    ...(endpoint === undefined ? {} : { endpoint }),
    ...boundedClientConfig(bounds),
  });
  addCallDeadline(cloudFormation, bounds.callDeadlineMs);
  return cloudFormation;
}
