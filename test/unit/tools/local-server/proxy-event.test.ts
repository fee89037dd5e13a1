import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  LOCAL_API,
  MalformedProxyResultError,
  splitTarget,
  toHttpResponse,
  toProxyEvent,
  type LocalHttpRequest,
  type ProxyEventContext,
} from '../../../../tools/local-server/proxy-event';

const baseRequest: LocalHttpRequest = {
  method: 'POST',
  target: '/payment',
  rawHeaders: ['Host', '127.0.0.1:3000', 'Content-Type', 'application/json', 'User-Agent', 'curl/8.5.0'],
  body: Buffer.from('{"amount":1}'),
  sourceIp: '127.0.0.1',
  protocol: 'HTTP/1.1',
};

const context: ProxyEventContext = {
  resource: '/payment',
  requestId: '6f1c9d52-0000-4000-8000-000000000001',
  requestTimeEpoch: Date.UTC(2026, 1, 3, 4, 5, 6),
  stage: 'local',
};

describe('toProxyEvent', () => {
  it('builds a REST proxy event with the resource, path, method, body and request context', () => {
    // Act
    const event = toProxyEvent(baseRequest, context);

    // Assert
    expect(event).toEqual({
      resource: '/payment',
      path: '/payment',
      httpMethod: 'POST',
      headers: { Host: '127.0.0.1:3000', 'Content-Type': 'application/json', 'User-Agent': 'curl/8.5.0' },
      multiValueHeaders: {
        Host: ['127.0.0.1:3000'],
        'Content-Type': ['application/json'],
        'User-Agent': ['curl/8.5.0'],
      },
      queryStringParameters: null,
      multiValueQueryStringParameters: null,
      pathParameters: null,
      stageVariables: null,
      requestContext: {
        accountId: LOCAL_API.accountId,
        apiId: LOCAL_API.apiId,
        authorizer: undefined,
        domainName: '127.0.0.1',
        domainPrefix: '127',
        extendedRequestId: context.requestId,
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
          sourceIp: '127.0.0.1',
          user: null,
          userAgent: 'curl/8.5.0',
          userArn: null,
        },
        path: '/payment',
        protocol: 'HTTP/1.1',
        requestId: context.requestId,
        requestTime: '03/Feb/2026:04:05:06 +0000',
        requestTimeEpoch: context.requestTimeEpoch,
        resourceId: LOCAL_API.resourceId,
        resourcePath: '/payment',
        stage: 'local',
      },
      body: '{"amount":1}',
      isBase64Encoded: false,
    });
  });

  it.each<[string, string[], Record<string, string>, Record<string, string[]>]>([
    [
      "keeps the caller's casing of header names",
      ['aPP-iD', 'demo', 'APP-KEY', 'secret-value-1234'],
      { 'aPP-iD': 'demo', 'APP-KEY': 'secret-value-1234' },
      { 'aPP-iD': ['demo'], 'APP-KEY': ['secret-value-1234'] },
    ],
    [
      'puts every value of a repeated header in multiValueHeaders and the last one in headers',
      ['App-key', 'first-key-0000000', 'App-key', 'second-key-000000'],
      { 'App-key': 'second-key-000000' },
      { 'App-key': ['first-key-0000000', 'second-key-000000'] },
    ],
    [
      'keeps names that differ only in case apart, as API Gateway does',
      ['App-Key', 'one', 'app-key', 'two'],
      { 'App-Key': 'one', 'app-key': 'two' },
      { 'App-Key': ['one'], 'app-key': ['two'] },
    ],
    [
      'keeps a header named __proto__ as an ordinary header',
      ['__proto__', 'x'],
      { ['__proto__']: 'x' },
      { ['__proto__']: ['x'] },
    ],
    ['gives empty header maps when the request has no headers', [], {}, {}],
  ])('%s', (_label, rawHeaders, headers, multiValueHeaders) => {
    // Act
    const event = toProxyEvent({ ...baseRequest, rawHeaders }, context);

    // Assert: as entries, so that a header named __proto__ counts as one
    expect(Object.entries(event.headers)).toEqual(Object.entries(headers));
    expect(Object.entries(event.multiValueHeaders)).toEqual(Object.entries(multiValueHeaders));
  });

  it.each([
    { name: 'an empty body', body: Buffer.alloc(0), expected: null },
    { name: 'a UTF-8 body', body: Buffer.from('{"name":"Zoë 💳"}'), expected: '{"name":"Zoë 💳"}' },
    { name: 'a blank body', body: Buffer.from('  '), expected: '  ' },
  ])('passes $name as text, never base64', ({ body, expected }) => {
    // Act
    const event = toProxyEvent({ ...baseRequest, body }, context);

    // Assert
    expect(event.body).toBe(expected);
    expect(event.isBase64Encoded).toBe(false);
  });

  it.each([
    { target: '/payment?', single: null, multi: null },
    { target: '/payment?a=1', single: { a: '1' }, multi: { a: ['1'] } },
    { target: '/payment?a=1&a=2&b', single: { a: '2', b: '' }, multi: { a: ['1', '2'], b: [''] } },
    {
      target: '/payment?q=a%20b+c&x=%E2%82%AC',
      single: { q: 'a b c', x: '€' },
      multi: { q: ['a b c'], x: ['€'] },
    },
    { target: '/payment?bad=%E0%A4%A', single: { bad: '%E0%A4%A' }, multi: { bad: ['%E0%A4%A'] } },
  ])('maps the query of $target (last value in the single-value map)', ({ target, single, multi }) => {
    // Act
    const event = toProxyEvent({ ...baseRequest, target }, context);

    // Assert
    expect(event.path).toBe('/payment');
    expect(event.queryStringParameters).toEqual(single);
    expect(event.multiValueQueryStringParameters).toEqual(multi);
  });

  it('reports the path as sent, trailing slash included, and the routed resource separately', () => {
    // Act
    const event = toProxyEvent({ ...baseRequest, target: '/payment/?x=1' }, context);

    // Assert
    expect(event.path).toBe('/payment/');
    expect(event.requestContext.path).toBe('/payment/');
    expect(event.resource).toBe('/payment');
    expect(event.requestContext.resourcePath).toBe('/payment');
  });

  it.each<[string, string[], (string | undefined)[], string | null]>([
    [
      'from the last Host and User-Agent values, in any casing',
      ['host', 'first.example.test', 'host', 'api.example.test:8443', 'user-agent', 'tests/1.0'],
      ['api.example.test', 'api'],
      'tests/1.0',
    ],
    ['as none when the request has no headers', [], [undefined, undefined], null],
  ])('takes the user agent and domain %s', (_label, rawHeaders, [domainName, domainPrefix], userAgent) => {
    // Act
    const { requestContext } = toProxyEvent({ ...baseRequest, rawHeaders }, context);

    // Assert
    expect([requestContext.domainName, requestContext.domainPrefix]).toEqual([domainName, domainPrefix]);
    expect(requestContext.identity.userAgent).toBe(userAgent);
  });
});

describe('splitTarget', () => {
  it.each([
    { target: '/payment', path: '/payment', query: undefined },
    { target: '/payment?a=1?b', path: '/payment', query: 'a=1?b' },
    { target: '/x/../payment', path: '/x/../payment', query: undefined },
    { target: 'http://127.0.0.1:3000/payment?a=1', path: '/payment', query: 'a=1' },
    { target: 'http://127.0.0.1:3000', path: '/', query: undefined },
    { target: '/payment#frag', path: '/payment', query: undefined },
    { target: '*', path: '*', query: undefined },
  ])('splits $target', ({ target, path, query }) => {
    // Act / Assert
    expect(splitTarget(target)).toEqual({ path, query });
  });
});

describe('toHttpResponse', () => {
  it('carries status, headers and body over', () => {
    // Arrange
    const result: APIGatewayProxyResult = {
      statusCode: 200,
      headers: { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' },
      body: '{"code":"ok"}',
    };

    // Act
    const response = toHttpResponse(result);

    // Assert
    expect(response.statusCode).toBe(200);
    expect(response.headers).toEqual({ 'Content-Type': ['application/json'], 'Cache-Control': ['no-store'] });
    expect(response.body.toString('utf8')).toBe('{"code":"ok"}');
  });

  it('lets multiValueHeaders replace a header of the same name in any casing, and keeps the others', () => {
    // Arrange
    const result: APIGatewayProxyResult = {
      statusCode: 200,
      headers: { 'Set-Cookie': 'a=1', 'X-Single': 7, 'X-Flag': true },
      multiValueHeaders: { 'set-cookie': ['b=2', 'c=3'], Vary: ['Origin'] },
      body: '',
    };

    // Act
    const response = toHttpResponse(result);

    // Assert
    expect(response.headers).toEqual({
      'set-cookie': ['b=2', 'c=3'],
      'X-Single': ['7'],
      'X-Flag': ['true'],
      Vary: ['Origin'],
    });
  });

  it('decodes a base64 body', () => {
    // Act
    const response = toHttpResponse({
      statusCode: 200,
      body: Buffer.from([0, 1, 2]).toString('base64'),
      isBase64Encoded: true,
    });

    // Assert
    expect([...response.body]).toEqual([0, 1, 2]);
  });

  it.each([
    { name: 'a status below 100', result: { statusCode: 99, body: '' } },
    { name: 'a status above 599', result: { statusCode: 600, body: '' } },
    { name: 'a fractional status', result: { statusCode: 200.5, body: '' } },
    { name: 'a missing status', result: { body: '' } },
    { name: 'an object body', result: { statusCode: 200, body: { code: 'ok' } } },
    { name: 'an object header value', result: { statusCode: 200, body: '', headers: { 'X-A': {} } } },
    {
      name: 'a non-list multi-value header',
      result: { statusCode: 200, body: '', multiValueHeaders: { 'X-A': 'v' } },
    },
  ])('refuses $name as a malformed proxy result', ({ result }) => {
    // Act / Assert
    expect(() => toHttpResponse(result as unknown as APIGatewayProxyResult)).toThrow(
      MalformedProxyResultError,
    );
  });
});
