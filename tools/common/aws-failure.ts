import { errorCode, errorMessage, errorName } from '../../shared/errors';
import { AWS_SERVICES, type AwsService } from './aws-settings';
import { firstLine, shortened } from './text';

const NETWORK_ERROR_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/**
 * Node's socket errors carry a code; when the SDK had to wrap one (it does for errors from another realm, as
 * under jest) only the message keeps it ("connect ECONNREFUSED 127.0.0.1:4566").
 */
function networkErrorCode(error: unknown, message: string): string | undefined {
  const code = errorCode(error);
  if (code !== undefined) return NETWORK_ERROR_CODES.has(code) ? code : undefined;
  return [...NETWORK_ERROR_CODES].find((known) => new RegExp(`\\b${known}\\b`).test(message));
}

/**
 * Problems of the operator's environment rather than of one call (no credentials, no region): reported without
 * naming a resource. `credentialsHint` is the tool's own way around missing credentials.
 */
export function describeAwsEnvironmentProblem(error: unknown, credentialsHint?: string): string | undefined {
  const message = errorMessage(error) ?? '';
  if (errorName(error) === 'CredentialsProviderError' || /could not load credentials/i.test(message)) {
    const hint = credentialsHint === undefined ? '' : ` (${credentialsHint})`;
    return `no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY${hint}`;
  }
  if (/region is missing|region="" is not a valid/i.test(message)) return 'no AWS region: set AWS_REGION';
  return undefined;
}

/** The host (and port) a network error names: `getaddrinfo ENOTFOUND host`, `connect ECONNREFUSED 127.0.0.1:4566`. */
function hostOf(message: string, code: string): string | undefined {
  return new RegExp(`\\b${code}\\s+([A-Za-z0-9.:[\\]-]{1,253})`).exec(message)?.[1];
}

/**
 * One line about a failed call to `service`. AWS error messages name resources and actions, never secret
 * values; they are cut to one short line anyway. An unreachable service is named with the host and the region
 * tried: a region that does not exist (AWS_REGION=eu-west-9) or a wrong AWS_ENDPOINT_URL then shows at once.
 */
export function describeAwsFailure(error: unknown, service: AwsService, region?: string): string {
  const message = errorMessage(error);
  if (message === undefined) return 'unexpected failure';
  const environmentProblem = describeAwsEnvironmentProblem(error);
  if (environmentProblem !== undefined) return environmentProblem;
  const name = errorName(error) ?? 'Error';
  // Before the network codes: an attempt's time-out carries ETIMEDOUT too.
  if (name === 'TimeoutError' || name === 'AbortError' || name === 'RequestTimeout') {
    return `${service.name} did not answer in time`;
  }
  const networkCode = networkErrorCode(error, message);
  if (networkCode !== undefined) {
    const host = hostOf(message, networkCode);
    const where = `${host === undefined ? '' : ` at ${host}`}${region === undefined ? '' : ` in region ${region}`}`;
    return `could not reach ${service.name}${where} (${networkCode})`;
  }
  switch (name) {
    case 'AccessDeniedException':
      return `access denied: ${firstLine(message)}`;
    case 'UnrecognizedClientException':
    case 'InvalidSignatureException':
    case 'ExpiredTokenException':
      return `AWS rejected the credentials (${name})`;
    case 'ThrottlingException':
    case 'Throttling':
      return `${service.name} is throttling requests; try again shortly`;
    case 'DecryptionFailure':
      return `the secret's KMS key cannot decrypt it: ${firstLine(message)}`;
    default:
      return `${name}: ${firstLine(message)}`;
  }
}

/** A value for a POSIX shell, single-quoted. */
function shellQuoted(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

/**
 * An AWS CLI command to paste, for AWS CLI v1 and v2 alike: `--region` is always given, since v1 does not read
 * AWS_REGION (the variable the tools read first), so without it the command could act on another region than
 * the tool did; and no v2-only option.
 */
export function awsCliCommand(
  command: string,
  options: readonly (readonly [string, string])[],
  region: string | undefined,
): string {
  const parts = options.map(([option, value]) => `${option} ${shellQuoted(value)}`);
  return `aws ${command} ${[...parts, `--region ${region ?? '<region>'}`].join(' ')}`;
}

/** The secret a call was about, and the region the client used. */
export interface SecretInRegion {
  readonly secretId: string;
  readonly region: string | undefined;
}

/** A secret id as messages show it: cut, since the operator may have pasted a file where it belongs. */
export function secretLabel(secretId: string): string {
  return `secret ${shortened(secretId)}`;
}

/**
 * One line about a failed call on a secret, `action` naming the call ("could not read"). A wrong region looks
 * like a missing secret, so "not found" names the region used; a secret scheduled for deletion gets the command
 * that restores it.
 */
export function describeSecretFailure(error: unknown, action: string, secret: SecretInRegion): string {
  const label = secretLabel(secret.secretId);
  const region = secret.region ?? 'the configured region';
  switch (errorName(error)) {
    case 'ResourceNotFoundException':
      return `${label} not found in region ${region} (or it has no AWSCURRENT version); check AWS_REGION`;
    case 'InvalidRequestException':
      if (/marked (for deletion|deleted)/i.test(errorMessage(error) ?? '')) {
        const restore = awsCliCommand(
          'secretsmanager restore-secret',
          [['--secret-id', secret.secretId]],
          secret.region,
        );
        return `${action} ${label}: it is scheduled for deletion; to keep it, restore it: ${restore}`;
      }
      break;
  }
  return `${action} ${label}: ${describeAwsFailure(error, AWS_SERVICES.secretsManager, secret.region)}`;
}
