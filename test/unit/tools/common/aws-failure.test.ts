import {
  awsCliCommand,
  describeAwsEnvironmentProblem,
  describeAwsFailure,
  describeSecretFailure,
} from '../../../../tools/common/aws-failure';
import { AWS_SERVICES } from '../../../../tools/common/aws-settings';

/** An error as the SDK raises it for a service's answer. */
const awsError = (name: string, message: string): Error => Object.assign(new Error(message), { name });

describe('describeAwsFailure', () => {
  it.each<[string, unknown, string]>([
    [
      'a throttle',
      awsError('ThrottlingException', 'Rate exceeded'),
      'Secrets Manager is throttling requests; try again shortly',
    ],
    [
      'expired credentials',
      awsError('ExpiredTokenException', 'The security token included in the request is expired'),
      'AWS rejected the credentials (ExpiredTokenException)',
    ],
    [
      'a host that does not resolve',
      Object.assign(new Error('getaddrinfo'), { code: 'ENOTFOUND' }),
      'could not reach Secrets Manager (ENOTFOUND)',
    ],
    [
      'a refused connection the SDK wrapped, with the code only in the message',
      new Error('connect ECONNREFUSED 127.0.0.1:4566'),
      'could not reach Secrets Manager at 127.0.0.1:4566 (ECONNREFUSED)',
    ],
    [
      'a time-out, which carries ETIMEDOUT too',
      Object.assign(awsError('TimeoutError', 'socket timed out'), { code: 'ETIMEDOUT' }),
      'Secrets Manager did not answer in time',
    ],
    [
      'access denied',
      awsError('AccessDeniedException', 'not authorized\nmore'),
      'access denied: not authorized',
    ],
    ['something else', awsError('OddError', 'first line\nsecond line'), 'OddError: first line'],
    ['a long message', awsError('OddError', 'x'.repeat(20_000)), `OddError: ${'x'.repeat(200)}…`],
    ['a thrown string', 'boom', 'unexpected failure'],
  ])('describes %s in one line that names Secrets Manager', (_label, failure, description) => {
    expect(describeAwsFailure(failure, AWS_SERVICES.secretsManager)).toBe(description);
  });

  it('names the host and the region tried when a service cannot be reached', () => {
    const failure = Object.assign(new Error('getaddrinfo ENOTFOUND secretsmanager.eu-west-9.amazonaws.com'), {
      code: 'ENOTFOUND',
    });

    expect(describeAwsFailure(failure, AWS_SERVICES.secretsManager, 'eu-west-9')).toBe(
      'could not reach Secrets Manager at secretsmanager.eu-west-9.amazonaws.com in region eu-west-9 (ENOTFOUND)',
    );
  });

  it.each<[string, unknown, string]>([
    [
      'a refused connection',
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      'could not reach CloudFormation (ECONNREFUSED)',
    ],
    [
      'a time-out',
      awsError('TimeoutError', 'The operation was aborted due to timeout'),
      'CloudFormation did not answer in time',
    ],
    [
      'a throttle',
      awsError('Throttling', 'Rate exceeded'),
      'CloudFormation is throttling requests; try again shortly',
    ],
  ])('names the service it was talking to: %s with CloudFormation', (_label, failure, description) => {
    expect(describeAwsFailure(failure, AWS_SERVICES.cloudFormation)).toBe(description);
  });
});

describe('describeAwsEnvironmentProblem', () => {
  it('names missing credentials, with the hint the tool gives', () => {
    const failure = awsError('CredentialsProviderError', 'Could not load credentials from any providers');

    expect(describeAwsEnvironmentProblem(failure, 'or use --file')).toBe(
      'no AWS credentials found: set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or use --file)',
    );
  });

  it('names a missing region', () => {
    expect(describeAwsEnvironmentProblem(new Error('Region is missing'))).toBe(
      'no AWS region: set AWS_REGION',
    );
  });

  it('says nothing of a failure of the call itself', () => {
    expect(
      describeAwsEnvironmentProblem(awsError('ResourceNotFoundException', 'no such secret')),
    ).toBeUndefined();
  });
});

describe('describeSecretFailure', () => {
  const secret = { secretId: 'payment-api-keys', region: 'us-east-1' };

  it('reports a secret not found with the region the tool used, since a wrong region looks the same', () => {
    const failure = awsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");

    expect(describeSecretFailure(failure, 'could not read', secret)).toBe(
      'secret payment-api-keys not found in region us-east-1 (or it has no AWSCURRENT version); check AWS_REGION',
    );
  });

  it.each([
    "You can't perform this operation on the secret because it was marked for deletion.",
    "You tried to perform the operation on a secret that's currently marked deleted.",
  ])('gives the command that restores a secret scheduled for deletion (%s)', (message) => {
    const failure = awsError('InvalidRequestException', message);

    expect(describeSecretFailure(failure, 'could not read', secret)).toBe(
      'could not read secret payment-api-keys: it is scheduled for deletion; to keep it, restore it: ' +
        "aws secretsmanager restore-secret --secret-id 'payment-api-keys' --region us-east-1",
    );
  });

  it('describes any other failure as the service failure it is', () => {
    const failure = awsError('InvalidRequestException', 'You provided a parameter value that is not valid');

    expect(describeSecretFailure(failure, 'could not read', secret)).toBe(
      'could not read secret payment-api-keys: InvalidRequestException: You provided a parameter value that is not valid',
    );
  });

  it('cuts a secret id that is far too long to be one', () => {
    const failure = awsError('ResourceNotFoundException', 'not found');

    const line = describeSecretFailure(failure, 'could not read', {
      ...secret,
      secretId: 'a'.repeat(20_000),
    });

    expect(line).toBe(
      `secret ${'a'.repeat(200)}… not found in region us-east-1 (or it has no AWSCURRENT version); check AWS_REGION`,
    );
  });
});

describe('awsCliCommand', () => {
  it('always names the region, for AWS CLI v1 as for v2, and quotes every value for the shell', () => {
    expect(awsCliCommand('secretsmanager restore-secret', [['--secret-id', "it's"]], 'eu-west-1')).toBe(
      `aws secretsmanager restore-secret --secret-id 'it'\\''s' --region eu-west-1`,
    );
  });

  it('leaves a placeholder to fill in when the region is not known', () => {
    expect(awsCliCommand('secretsmanager restore-secret', [['--secret-id', 'keys']], undefined)).toBe(
      "aws secretsmanager restore-secret --secret-id 'keys' --region <region>",
    );
  });
});
