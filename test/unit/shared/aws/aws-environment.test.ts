import {
  AWS_JSON_SERVICES,
  readAwsAccess,
  readEnvironmentCredentials,
  resolveTarget,
} from '../../../../shared/aws/aws-environment';

const KEYS = { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE', AWS_SECRET_ACCESS_KEY: 'secret-value-never-logged' };
const { secretsManager, dynamoDb } = AWS_JSON_SERVICES;

describe('resolveTarget: where a call goes, as the SDK would send it', () => {
  it.each<[string, Record<string, string>, typeof secretsManager | typeof dynamoDb, string]>([
    [
      'a region no partition names, as the SDK: aws',
      { AWS_REGION: 'xx-new-1' },
      dynamoDb,
      'https://dynamodb.xx-new-1.amazonaws.com/',
    ],
    [
      'AWS_ENDPOINT_URL, never the other service variable',
      {
        AWS_REGION: 'eu-west-1',
        AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
        AWS_ENDPOINT_URL_DYNAMODB: 'http://127.0.0.1:2',
      },
      secretsManager,
      'http://127.0.0.1:1/',
    ],
    [
      'an empty variable counts as unset',
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: '', AWS_USE_FIPS_ENDPOINT: '' },
      secretsManager,
      'https://secretsmanager.eu-west-1.amazonaws.com/',
    ],
  ])('%s', (_label, env, service, url) => {
    const target = resolveTarget(env, service);

    expect(target).toEqual({ ok: true, value: { url: new URL(url), region: env.AWS_REGION } });
  });

  it.each<[string, Record<string, string>, string]>([
    ['no region', {}, 'AWS_REGION is not set: the region is missing (AWS_DEFAULT_REGION is not read)'],
    [
      'AWS_DEFAULT_REGION alone',
      { AWS_DEFAULT_REGION: 'eu-west-1' },
      'AWS_REGION is not set: the region is missing (AWS_DEFAULT_REGION is not read)',
    ],
    [
      'a region that is no hostname label',
      { AWS_REGION: 'eu-west-1.evil.example' },
      'AWS_REGION must be a region name such as eu-west-1, got "eu-west-1.evil.example"',
    ],
    [
      'another partition',
      { AWS_REGION: 'us-iso-east-1' },
      `AWS_REGION "us-iso-east-1" is in the aws-iso partition: the payment Lambda's client calls aws, aws-cn, aws-us-gov only`,
    ],
    [
      'the European sovereign cloud',
      { AWS_REGION: 'eusc-de-east-1' },
      `AWS_REGION "eusc-de-east-1" is in the aws-eusc partition: the payment Lambda's client calls aws, aws-cn, aws-us-gov only`,
    ],
    [
      'a global pseudo-region',
      { AWS_REGION: 'aws-global' },
      'AWS_REGION "aws-global" is a global pseudo-region: name a region such as eu-west-1',
    ],
    [
      'dual-stack',
      { AWS_REGION: 'eu-west-1', AWS_USE_DUALSTACK_ENDPOINT: 'true' },
      "AWS_USE_DUALSTACK_ENDPOINT=true is not supported by the payment Lambda's client (IPv4 endpoints only)",
    ],
    [
      'a boolean that is not true or false',
      { AWS_REGION: 'eu-west-1', AWS_USE_FIPS_ENDPOINT: 'yes' },
      'AWS_USE_FIPS_ENDPOINT must be "true" or "false", got "yes"',
    ],
    [
      'FIPS with an endpoint URL, which the SDK refuses too',
      { AWS_REGION: 'eu-west-1', AWS_USE_FIPS_ENDPOINT: 'true', AWS_ENDPOINT_URL: 'http://127.0.0.1:1' },
      'AWS_USE_FIPS_ENDPOINT=true and AWS_ENDPOINT_URL together: FIPS and a custom endpoint are not supported',
    ],
    [
      'an endpoint URL that is not http(s)',
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_SECRETS_MANAGER: 'ftp://127.0.0.1:21' },
      'AWS_ENDPOINT_URL_SECRETS_MANAGER must be an http:// or https:// URL, got one of scheme "ftp"',
    ],
    [
      'an endpoint that is no URL',
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'localhost:4566' },
      'AWS_ENDPOINT_URL must be an http:// or https:// URL, got one of scheme "localhost"',
    ],
    [
      'an endpoint that is not a URL at all',
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: '127.0.0.1' },
      'AWS_ENDPOINT_URL is not a URL: it must be http:// or https:// followed by a host',
    ],
    [
      'an endpoint with a user',
      { AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL: 'https://user:pw@example.com' },
      'AWS_ENDPOINT_URL must hold a scheme, a host, a port and a path only (no user, query or fragment)',
    ],
  ])('refuses %s with one line', (_label, env, problem) => {
    expect(resolveTarget(env, secretsManager)).toEqual({ ok: false, problem });
  });

  it("refuses DynamoDB's account-ID endpoints when they are required, and Secrets Manager does not care", () => {
    const env = { AWS_REGION: 'eu-west-1', AWS_ACCOUNT_ID_ENDPOINT_MODE: 'required' };

    expect(resolveTarget(env, dynamoDb)).toEqual({
      ok: false,
      problem:
        "AWS_ACCOUNT_ID_ENDPOINT_MODE=required is not supported by the payment Lambda's client (it calls DynamoDB's regional endpoint)",
    });
    expect(resolveTarget(env, secretsManager).ok).toBe(true);
  });
});

describe('readEnvironmentCredentials', () => {
  it('reads the key pair, and the session token when there is one', () => {
    expect(readEnvironmentCredentials({ ...KEYS, AWS_SESSION_TOKEN: 'token' })).toEqual({
      ok: true,
      value: {
        accessKeyId: 'AKIDEXAMPLE',
        secretAccessKey: 'secret-value-never-logged',
        sessionToken: 'token',
      },
    });
    expect(readEnvironmentCredentials(KEYS)).toEqual({
      ok: true,
      value: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret-value-never-logged' },
    });
  });

  it.each<[string, Record<string, string>, string]>([
    ['both missing', {}, 'AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set'],
    ['the secret key missing', { AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE' }, 'AWS_SECRET_ACCESS_KEY is not set'],
    [
      'the key id empty',
      { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: 'secret-value-never-logged' },
      'AWS_ACCESS_KEY_ID is not set',
    ],
  ])('says which variable is missing (%s), and never a value', (_label, env, says) => {
    const read = readEnvironmentCredentials(env);

    expect(read.ok).toBe(false);
    const problem = read.ok ? '' : read.problem;
    expect(problem).toContain(says);
    expect(problem).not.toContain('secret-value-never-logged');
    expect(problem).not.toContain('AKIDEXAMPLE');
  });
});

describe('readAwsAccess', () => {
  it('gives a target per service and the credentials', async () => {
    const access = readAwsAccess({ ...KEYS, AWS_REGION: 'eu-west-1' }, ['secretsManager', 'dynamoDb']);

    if (!access.ok) throw new Error(access.problem);
    expect(access.value.targets.dynamoDb.url.host).toBe('dynamodb.eu-west-1.amazonaws.com');
    expect(access.value.targets.secretsManager.url.host).toBe('secretsmanager.eu-west-1.amazonaws.com');
    expect(await access.value.credentials()).toEqual({
      accessKeyId: 'AKIDEXAMPLE',
      secretAccessKey: 'secret-value-never-logged',
    });
  });

  it('reads only the services it is asked for: a DynamoDB-only refusal does not stop the Lambda without limits', () => {
    const env = { ...KEYS, AWS_REGION: 'eu-west-1', AWS_ENDPOINT_URL_DYNAMODB: 'file:///tmp/x' };

    expect(readAwsAccess(env, ['secretsManager']).ok).toBe(true);
    expect(readAwsAccess(env, ['secretsManager', 'dynamoDb'])).toEqual({
      ok: false,
      problem: 'AWS_ENDPOINT_URL_DYNAMODB must be an http:// or https:// URL, got one of scheme "file"',
    });
  });
});
