import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import {
  AWS_SERVICES,
  OPERATOR_CALL_BOUNDS,
  readAwsClientSettings,
} from '../../../../tools/common/aws-settings';
import { createOperatorSecretsManagerClient } from '../../../../tools/common/aws-clients';

const STATIC_KEYS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'example-secret' };

describe('readAwsClientSettings', () => {
  it.each<[string, Readonly<Record<string, string>>, string | undefined]>([
    ['AWS_REGION', { AWS_REGION: 'us-west-2' }, 'us-west-2'],
    ['AWS_DEFAULT_REGION, as the AWS CLI reads it', { AWS_DEFAULT_REGION: 'eu-central-1' }, 'eu-central-1'],
    [
      'AWS_REGION over AWS_DEFAULT_REGION',
      { AWS_REGION: 'us-west-2', AWS_DEFAULT_REGION: 'eu-central-1' },
      'us-west-2',
    ],
    [
      'AWS_DEFAULT_REGION when AWS_REGION is empty',
      { AWS_REGION: '', AWS_DEFAULT_REGION: 'eu-central-1' },
      'eu-central-1',
    ],
    ['no region when both are empty', { AWS_REGION: '', AWS_DEFAULT_REGION: '' }, undefined],
  ])('takes the region from %s', (_label, env, region) => {
    expect(readAwsClientSettings(env, AWS_SERVICES.secretsManager).region).toBe(region);
  });

  it.each<[string, Readonly<Record<string, string>>, string | undefined]>([
    [
      "the service's own variable over AWS_ENDPOINT_URL",
      { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:2' },
      'http://127.0.0.1:2',
    ],
    [
      'AWS_ENDPOINT_URL when the own variable is empty',
      { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ENDPOINT_URL_SECRETS_MANAGER: '' },
      'http://127.0.0.1:1',
    ],
    [
      "AWS_ENDPOINT_URL, not another service's variable",
      { AWS_ENDPOINT_URL: 'http://127.0.0.1:1', AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://127.0.0.1:3' },
      'http://127.0.0.1:1',
    ],
  ])('takes the Secrets Manager endpoint from %s', (_label, env, endpoint) => {
    expect(readAwsClientSettings(env, AWS_SERVICES.secretsManager).endpoint).toBe(endpoint);
  });

  it("reads CloudFormation's endpoint from its own variable", () => {
    const env = {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'http://127.0.0.1:2',
      AWS_ENDPOINT_URL_CLOUDFORMATION: 'http://127.0.0.1:3',
    };

    expect(readAwsClientSettings(env, AWS_SERVICES.cloudFormation).endpoint).toBe('http://127.0.0.1:3');
  });

  it('passes static credentials, with a session token, only when both keys are set', () => {
    expect(
      readAwsClientSettings({ ...STATIC_KEYS, AWS_SESSION_TOKEN: 'token' }, AWS_SERVICES.secretsManager)
        .credentials,
    ).toEqual({ accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'example-secret', sessionToken: 'token' });
    expect(
      readAwsClientSettings(
        { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: '' },
        AWS_SERVICES.secretsManager,
      ),
    ).toEqual({});
  });

  it('passes the profile, and nothing at all for an environment of empty variables', () => {
    expect(readAwsClientSettings({ AWS_PROFILE: 'ops' }, AWS_SERVICES.secretsManager)).toEqual({
      profile: 'ops',
    });
    expect(
      readAwsClientSettings(
        {
          AWS_REGION: '',
          AWS_PROFILE: '',
          AWS_ENDPOINT_URL: '',
          AWS_ACCESS_KEY_ID: '',
          AWS_SECRET_ACCESS_KEY: '',
        },
        AWS_SERVICES.secretsManager,
      ),
    ).toEqual({});
  });
});

describe('createOperatorSecretsManagerClient', () => {
  /** The resolved custom endpoint's port (the config's provider is async at run time). */
  const portOf = async (client: SecretsManagerClient): Promise<number | undefined> =>
    (await Promise.resolve(client.config.endpoint?.()))?.port;

  it('is configured from the environment it is given, with the operator bounds', async () => {
    const client = createOperatorSecretsManagerClient({
      ...STATIC_KEYS,
      AWS_DEFAULT_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
    });

    expect(await client.config.region()).toBe('eu-central-1');
    expect(await client.config.credentials()).toMatchObject({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'example-secret',
    });
    expect(await portOf(client)).toBe(4566);
    expect(await client.config.maxAttempts()).toBe(OPERATOR_CALL_BOUNDS.maxAttempts);
    client.destroy();
  });

  it('takes other bounds when given them', async () => {
    const client = createOperatorSecretsManagerClient(
      { ...STATIC_KEYS, AWS_REGION: 'us-east-1' },
      { ...OPERATOR_CALL_BOUNDS, maxAttempts: 1 },
    );

    expect(await client.config.maxAttempts()).toBe(1);
    client.destroy();
  });
});
