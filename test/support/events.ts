import type { APIGatewayProxyEvent } from 'aws-lambda';

/** A REST API (v1) proxy event for POST /payment, as API Gateway sends it. */
export const baseEvent: APIGatewayProxyEvent = {
  resource: '/payment',
  path: '/payment',
  httpMethod: 'POST',
  headers: {},
  multiValueHeaders: {},
  queryStringParameters: null,
  multiValueQueryStringParameters: null,
  pathParameters: null,
  stageVariables: null,
  body: null,
  isBase64Encoded: false,
  requestContext: {
    accountId: '123456789012',
    apiId: 'abc123defg',
    authorizer: null,
    protocol: 'HTTP/1.1',
    httpMethod: 'POST',
    identity: {
      accessKey: null,
      accountId: null,
      apiKey: null,
      apiKeyId: null,
      caller: null,
      clientCert: null,
      cognitoAuthenticationProvider: null,
      cognitoAuthenticationType: null,
      cognitoIdentityId: null,
      cognitoIdentityPoolId: null,
      principalOrgId: null,
      sourceIp: '203.0.113.10',
      user: null,
      userAgent: 'curl/8.5.0',
      userArn: null,
    },
    path: '/prod/payment',
    stage: 'prod',
    requestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
    requestTimeEpoch: 1_795_000_000_000,
    resourceId: 'res123',
    resourcePath: '/payment',
  },
};

/**
 * The two header maps as API Gateway fills them from the headers a client sent: `multiValueHeaders` holds every value
 * under the sent name, `headers` only the last one.
 */
export function apiGatewayHeaderMaps(pairs: ReadonlyArray<readonly [string, string]>): {
  headers: Record<string, string>;
  multiValueHeaders: Record<string, string[]>;
} {
  const multi = new Map<string, string[]>();
  for (const [name, value] of pairs) multi.set(name, [...(multi.get(name) ?? []), value]);
  return {
    headers: Object.fromEntries([...multi].map(([name, values]) => [name, values[values.length - 1] ?? ''])),
    multiValueHeaders: Object.fromEntries(multi),
  };
}

/** An event with the given headers (both maps filled as API Gateway fills them); `overrides` on top. */
export function paymentEvent(
  headerPairs: ReadonlyArray<readonly [string, string]>,
  overrides: Partial<APIGatewayProxyEvent> = {},
): APIGatewayProxyEvent {
  return { ...baseEvent, ...apiGatewayHeaderMaps(headerPairs), ...overrides };
}

/** A request of `appId` with `key` and a JSON body type, as API Gateway sends it; `overrides` on top. */
export function requestOf(
  appId: string,
  key: string,
  overrides: Partial<APIGatewayProxyEvent> = {},
): APIGatewayProxyEvent {
  return paymentEvent(
    [
      ['Content-Type', 'application/json'],
      ['App-id', appId],
      ['App-key', key],
    ],
    overrides,
  );
}
