/**
 * moto checks no signature, so moto alone proves nothing about one. This test compares the request the payment
 * Lambda's small client makes for each of its two calls with the request the AWS SDK makes for the same call, from
 * the same environment, credentials and clock: method, host, path, body, Content-Type, X-Amz-Target and the
 * credential scope. Then it signs our request again with the SDK's own signer (@smithy/signature-v4) over exactly
 * the headers we signed, and gets the same signature. For each partition, FIPS, and each endpoint variable.
 */
import { DynamoDBClient, UpdateItemCommand, type UpdateItemCommandInput } from '@aws-sdk/client-dynamodb';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SignatureV4 } from '@smithy/signature-v4';
import type { Checksum, SourceData } from '@smithy/types';
import { createHash, createHmac } from 'node:crypto';
import { DynamoDbCounterStore } from '../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { COUNTER_TABLE } from '../../../../lambda/payment/rate-limit/counter-table';
import { secretsManagerSource } from '../../../../lambda/payment/secrets-manager-source';
import {
  AWS_JSON_SERVICES,
  resolveTarget,
  type AwsCredentials,
} from '../../../../shared/aws/aws-environment';
import { AwsJsonClient } from '../../../../shared/aws/aws-json-client';
import { KEY_FETCH_ATTEMPTS } from '../../../../lambda/payment/secrets-manager-source';
import { LIMITER_ATTEMPTS } from '../../../../lambda/payment/rate-limit/dynamodb-counter-store';
import { fakeAwsService } from '../../../support/fake-aws';

/** A fixed clock for both: 2026-11-21T12:34:56Z. */
const NOW = Date.UTC(2026, 10, 21, 12, 34, 56);
const SECRET_ID = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:payment-api/keys-AbCdEf';
const TABLE = 'PaymentApi-RateLimits';
const INCREMENT = {
  key: 'shop#3600000000',
  capacity: 5,
  expiresAtSeconds: 1_800_000_600,
  signal: AbortSignal.timeout(60_000),
};

const CREDENTIALS: readonly (readonly [string, AwsCredentials])[] = [
  [
    'long-term credentials',
    { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' },
  ],
  [
    'temporary credentials',
    {
      accessKeyId: 'ASIAEXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY',
      sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//////////token+with/slashes==',
    },
  ],
];

/** The environments: each partition with and without FIPS, and each endpoint variable. */
const ENVIRONMENTS: readonly (readonly [string, Record<string, string>])[] = [
  ['aws', { AWS_REGION: 'eu-west-1' }],
  ['aws, FIPS', { AWS_REGION: 'us-east-2', AWS_USE_FIPS_ENDPOINT: 'true' }],
  ['aws-cn', { AWS_REGION: 'cn-north-1' }],
  ['aws-cn, FIPS', { AWS_REGION: 'cn-northwest-1', AWS_USE_FIPS_ENDPOINT: 'true' }],
  ['aws-us-gov', { AWS_REGION: 'us-gov-west-1' }],
  ['aws-us-gov, FIPS', { AWS_REGION: 'us-gov-east-1', AWS_USE_FIPS_ENDPOINT: 'true' }],
  ['AWS_ENDPOINT_URL', { AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL: 'http://127.0.0.1:4566' }],
  [
    "the service's own endpoint variable, over AWS_ENDPOINT_URL",
    {
      AWS_REGION: 'eu-central-1',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: 'https://secrets.internal.example:8443',
      AWS_ENDPOINT_URL_DYNAMODB: 'http://localhost:8000',
    },
  ],
  [
    'an endpoint with a base path',
    { AWS_REGION: 'us-west-2', AWS_ENDPOINT_URL: 'https://gateway.example/aws/' },
  ],
  [
    'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
    {
      AWS_REGION: 'ap-southeast-2',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:4566',
      AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'true',
    },
  ],
];

/** Every variable the cases set, cleared around each so the SDK reads only the case's. */
const VARIABLES = [
  'AWS_REGION',
  'AWS_USE_FIPS_ENDPOINT',
  'AWS_ENDPOINT_URL',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  'AWS_USE_DUALSTACK_ENDPOINT',
  'AWS_PROFILE',
  'AWS_CONFIG_FILE',
];

interface SeenRequest {
  readonly method: string;
  readonly host: string;
  readonly path: string;
  readonly body: string;
  readonly contentType: string | undefined;
  readonly target: string | undefined;
  readonly scope: string | undefined;
  /** Header names, lower-case, as listed in the Authorization header. */
  readonly signedHeaders: readonly string[];
  readonly signature: string | undefined;
  readonly headers: Readonly<Record<string, string>>;
}

function lowerCased(headers: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
}

function seen(
  method: string,
  host: string,
  path: string,
  body: string,
  rawHeaders: Readonly<Record<string, string>>,
): SeenRequest {
  const headers = lowerCased(rawHeaders);
  const authorization = headers.authorization ?? '';
  return {
    method,
    host,
    path,
    body,
    contentType: headers['content-type'],
    target: headers['x-amz-target'],
    scope: /Credential=[^/]+\/([^,]+),/.exec(authorization)?.[1],
    signedHeaders: (/SignedHeaders=([^,]+),/.exec(authorization)?.[1] ?? '').split(';'),
    signature: /Signature=([0-9a-f]{64})$/.exec(authorization)?.[1],
    headers,
  };
}

/** The SDK's request, as its HTTP handler would get it: signed, never sent. */
async function sdkRequest(
  send: (handler: { handle: (request: unknown) => Promise<never> }) => Promise<unknown>,
): Promise<SeenRequest> {
  let captured: SeenRequest | undefined;
  const handler = {
    handle: (request: unknown): Promise<never> => {
      const http = request as {
        method: string;
        hostname: string;
        port?: number;
        path: string;
        headers: Record<string, string>;
        body: Uint8Array | string;
      };
      // Decoded byte by byte: the SDK's body warns when read as a string.
      const body = typeof http.body === 'string' ? http.body : new TextDecoder().decode(http.body);
      captured = seen(http.method, http.headers.host ?? http.hostname, http.path, body, http.headers);
      return Promise.reject(new Error('captured'));
    },
  };
  await expect(send(handler)).rejects.toThrow('captured');
  if (captured === undefined) throw new Error('the SDK sent nothing');
  return captured;
}

/** Our request for the same call, from the same environment. */
async function ourRequest(
  env: Record<string, string>,
  credentials: AwsCredentials,
  call: 'GetSecretValue' | 'UpdateItem',
): Promise<SeenRequest> {
  const fake = fakeAwsService();
  fake
    .on(call)
    .resolves(call === 'GetSecretValue' ? { SecretString: '{}' } : { Attributes: { used: { N: '1' } } });
  const service = call === 'GetSecretValue' ? AWS_JSON_SERVICES.secretsManager : AWS_JSON_SERVICES.dynamoDb;
  const target = resolveTarget(env, service);
  if (!target.ok) throw new Error(target.problem);
  const client = new AwsJsonClient({
    service,
    bounds: call === 'GetSecretValue' ? KEY_FETCH_ATTEMPTS : LIMITER_ATTEMPTS,
    target: target.value,
    credentials: () => Promise.resolve(credentials),
    transport: fake.transport,
    now: () => NOW,
  });
  if (call === 'GetSecretValue') {
    await secretsManagerSource(SECRET_ID, client).fetchSecretString();
  } else {
    expect(await new DynamoDbCounterStore({ client, tableName: TABLE }).increment(INCREMENT)).toEqual({
      kind: 'counted',
      used: 1,
    });
  }
  const [attempt] = fake.attempts;
  if (attempt === undefined) throw new Error('we sent nothing');
  return seen('POST', attempt.url.host, attempt.url.pathname, attempt.body, attempt.headers);
}

/** The SDK's UpdateItem for the limiter's increment, written as the SDK is written. */
function sdkIncrement(): UpdateItemCommandInput {
  return {
    TableName: TABLE,
    Key: { [COUNTER_TABLE.partitionKey]: { S: INCREMENT.key } },
    UpdateExpression: 'ADD #used :one SET #expiresAt = :expiresAt',
    ConditionExpression: 'attribute_not_exists(#used) OR #used < :capacity',
    ExpressionAttributeNames: { '#used': COUNTER_TABLE.counter, '#expiresAt': COUNTER_TABLE.expiresAt },
    ExpressionAttributeValues: {
      ':one': { N: '1' },
      ':capacity': { N: String(INCREMENT.capacity) },
      ':expiresAt': { N: String(INCREMENT.expiresAtSeconds) },
    },
    ReturnValues: 'UPDATED_NEW',
  };
}

/** SHA-256 (and its HMAC) over node:crypto, in the shape @smithy/signature-v4 asks for. */
class NodeSha256 implements Checksum {
  private readonly hash: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;

  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', toBytes(secret));
  }

  update(data: Uint8Array): void {
    this.hash.update(data);
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }

  reset(): void {
    throw new Error('not needed');
  }
}

function toBytes(data: SourceData): Uint8Array {
  if (typeof data === 'string') return Buffer.from(data, 'utf8');
  if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return new Uint8Array(data);
}

/** Our request signed again by the SDK's signer, over exactly the headers we signed (it adds X-Amz-Date itself). */
async function resignedBySmithy(
  ours: SeenRequest,
  credentials: AwsCredentials,
  region: string,
  service: string,
) {
  const signed = new Set(ours.signedHeaders);
  const headers = Object.fromEntries(Object.entries(ours.headers).filter(([name]) => signed.has(name)));
  const [hostname = '', port] = ours.host.split(':');
  const signer = new SignatureV4({
    credentials,
    region,
    service,
    sha256: NodeSha256,
    uriEscapePath: true,
    // The SDK adds X-Amz-Content-Sha256 to its own requests; we did not sign one, and SigV4 does not need it.
    applyChecksum: false,
  });
  const request = await signer.sign(
    {
      method: ours.method,
      protocol: 'https:',
      hostname,
      ...(port === undefined ? {} : { port: Number(port) }),
      path: ours.path,
      query: {},
      headers,
      body: ours.body,
    },
    { signingDate: new Date(NOW) },
  );
  return seen(ours.method, ours.host, ours.path, ours.body, request.headers);
}

describe.each(ENVIRONMENTS)('the small client against the AWS SDK: %s', (_label, env) => {
  const saved: Record<string, string | undefined> = {};

  beforeEach(() => {
    for (const name of VARIABLES) {
      saved[name] = process.env[name];
      Reflect.deleteProperty(process.env, name);
    }
    Object.assign(process.env, env, { AWS_CONFIG_FILE: '/nonexistent/aws-config' });
    jest.spyOn(Date, 'now').mockReturnValue(NOW);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    for (const name of VARIABLES) {
      if (saved[name] === undefined) Reflect.deleteProperty(process.env, name);
      else process.env[name] = saved[name];
    }
  });

  describe.each(CREDENTIALS)('with %s', (_credentialsLabel, credentials) => {
    it.each([
      ['GetSecretValue', AWS_JSON_SERVICES.secretsManager] as const,
      ['UpdateItem', AWS_JSON_SERVICES.dynamoDb] as const,
    ])('%s: the same request, and the SDK signer gives our signature', async (call, service) => {
      const sdk = await sdkRequest((requestHandler) => {
        const config = { credentials, requestHandler, maxAttempts: 1 };
        return call === 'GetSecretValue'
          ? new SecretsManagerClient(config).send(
              new GetSecretValueCommand({ SecretId: SECRET_ID, VersionStage: 'AWSCURRENT' }),
            )
          : new DynamoDBClient(config).send(new UpdateItemCommand(sdkIncrement()));
      });
      const ours = await ourRequest(env, credentials, call);

      const fields = ({ method, host, path, body, contentType, target, scope }: SeenRequest) => ({
        method,
        host,
        path,
        body,
        contentType,
        target,
        scope,
      });
      expect(fields(ours)).toEqual(fields(sdk));
      expect(ours.contentType).toBe(service.contentType);
      expect(ours.scope).toBe(`20261121/${env.AWS_REGION ?? ''}/${service.signingName}/aws4_request`);
      expect(ours.signedHeaders).toEqual([
        'content-length',
        'content-type',
        'host',
        'x-amz-date',
        ...(credentials.sessionToken === undefined ? [] : ['x-amz-security-token']),
        'x-amz-target',
      ]);
      const resigned = await resignedBySmithy(ours, credentials, env.AWS_REGION ?? '', service.signingName);
      expect(resigned.signedHeaders).toEqual(ours.signedHeaders);
      expect(resigned.signature).toBe(ours.signature);
    });
  });
});
