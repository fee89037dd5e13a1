import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/**
 * The adapter between plain HTTP and API Gateway's REST proxy integration (payload format 1.0), both ways.
 * Pure: the request id and the clock come in as arguments, so the output is fully determined by the input.
 */

/** What the local server read from one HTTP request. */
export interface LocalHttpRequest {
  readonly method: string;
  /** The request target as sent: the path, then `?query` if any. */
  readonly target: string;
  /** node's `req.rawHeaders`: name, value, name, value… in the caller's casing and order, repeats kept. */
  readonly rawHeaders: readonly string[];
  /** Empty when the request had no body. */
  readonly body: Buffer;
  readonly sourceIp: string;
  /** `HTTP/1.1` and the like. */
  readonly protocol: string;
}

export interface ProxyEventContext {
  /** The API resource the request was routed to, such as `/payment`. */
  readonly resource: string;
  readonly requestId: string;
  readonly requestTimeEpoch: number;
  readonly stage: string;
}

/** Stand-ins for the identifiers a deployed API has and a local one does not. */
export const LOCAL_API = { accountId: '000000000000', apiId: 'local', resourceId: 'local' } as const;

export interface RequestTarget {
  readonly path: string;
  /** Everything after the first `?`, without it; undefined when there is no `?`. */
  readonly query: string | undefined;
}

/**
 * Splits a request target into path and query. The path is taken as sent (no dot-segment or percent-decoding
 * normalisation), so `/x/../payment` is not `/payment`. An absolute-form target (`http://host/path`, sent to
 * proxies) is reduced to its path and query.
 */
export function splitTarget(target: string): RequestTarget {
  let pathAndQuery = target;
  const absolute = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*/i.exec(target);
  if (absolute) pathAndQuery = target.slice(absolute[0].length) || '/';
  const hash = pathAndQuery.indexOf('#');
  if (hash !== -1) pathAndQuery = pathAndQuery.slice(0, hash);
  const question = pathAndQuery.indexOf('?');
  if (question === -1) return { path: pathAndQuery, query: undefined };
  return { path: pathAndQuery.slice(0, question), query: pathAndQuery.slice(question + 1) };
}

type SingleValueMap = Record<string, string>;
type MultiValueMap = Record<string, string[]>;

/**
 * Groups name/value pairs the way API Gateway REST fills its two maps: every value, in order, in the
 * multi-value map, and the LAST value in the single-value map. The last-value rule is API Gateway's documented
 * behaviour for query strings (`?name=you&name=me` gives `queryStringParameters.name === "me"`) and what
 * deployed APIs show for headers (`mv: a` then `mv: b` gives `headers.mv === "b"`). Names keep the caller's
 * spelling and are grouped exactly, since API Gateway treats header names case-sensitively; the handler
 * merges names case-insensitively itself.
 */
function groupPairs(pairs: readonly (readonly [string, string])[]): {
  single: SingleValueMap;
  multi: MultiValueMap;
} {
  const byName = new Map<string, string[]>();
  for (const [name, value] of pairs) {
    const values = byName.get(name);
    if (values) values.push(value);
    else byName.set(name, [value]);
  }
  // Object.fromEntries defines own properties, so a header named `__proto__` stays a header.
  return {
    single: Object.fromEntries([...byName].map(([name, values]) => [name, values[values.length - 1] ?? ''])),
    multi: Object.fromEntries(byName),
  };
}

function headerPairs(rawHeaders: readonly string[]): [string, string][] {
  const pairs: [string, string][] = [];
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    pairs.push([rawHeaders[index] ?? '', rawHeaders[index + 1] ?? '']);
  }
  return pairs;
}

/** Percent-decoding with `+` as a space, as URLSearchParams does; malformed escapes are kept as sent. */
function decodeQueryComponent(component: string): string {
  const spaced = component.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

function queryPairs(query: string | undefined): [string, string][] {
  if (query === undefined || query === '') return [];
  return query
    .split('&')
    .filter((part) => part !== '')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = equals === -1 ? part : part.slice(0, equals);
      const value = equals === -1 ? '' : part.slice(equals + 1);
      return [decodeQueryComponent(name), decodeQueryComponent(value)];
    });
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** API Gateway's `requestTime` format: `20/Feb/2018:22:48:57 +0000` (UTC). */
export function formatRequestTime(epochMs: number): string {
  const date = new Date(epochMs);
  const pad = (value: number): string => String(value).padStart(2, '0');
  const month = MONTHS[date.getUTCMonth()] ?? 'Jan';
  return (
    `${pad(date.getUTCDate())}/${month}/${date.getUTCFullYear()}:` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`
  );
}

/**
 * Builds the REST proxy event API Gateway would hand the Lambda for this request. The body is passed as UTF-8
 * text with `isBase64Encoded: false` (the API declares no binary media types); an empty body is `null`, and so
 * are the query maps when there is no query, as in API Gateway's events.
 */
export function toProxyEvent(request: LocalHttpRequest, context: ProxyEventContext): APIGatewayProxyEvent {
  const { path, query } = splitTarget(request.target);
  const headers = groupPairs(headerPairs(request.rawHeaders));
  const queryPairList = queryPairs(query);
  const queryMaps = queryPairList.length > 0 ? groupPairs(queryPairList) : undefined;
  const lastHeader = (name: string): string | undefined => {
    const wanted = name.toLowerCase();
    let found: string | undefined;
    for (const [headerName, value] of Object.entries(headers.single)) {
      if (headerName.toLowerCase() === wanted) found = value;
    }
    return found;
  };
  const host = lastHeader('host');
  const domainName = host?.replace(/:\d+$/, '');

  return {
    resource: context.resource,
    path,
    httpMethod: request.method,
    headers: headers.single,
    multiValueHeaders: headers.multi,
    queryStringParameters: queryMaps ? queryMaps.single : null,
    multiValueQueryStringParameters: queryMaps ? queryMaps.multi : null,
    pathParameters: null,
    stageVariables: null,
    requestContext: {
      accountId: LOCAL_API.accountId,
      apiId: LOCAL_API.apiId,
      authorizer: undefined,
      ...(domainName ? { domainName, domainPrefix: domainName.split('.', 1)[0] } : {}),
      extendedRequestId: context.requestId,
      httpMethod: request.method,
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
        sourceIp: request.sourceIp,
        user: null,
        userAgent: lastHeader('user-agent') ?? null,
        userArn: null,
      },
      path,
      protocol: request.protocol,
      requestId: context.requestId,
      requestTime: formatRequestTime(context.requestTimeEpoch),
      requestTimeEpoch: context.requestTimeEpoch,
      resourceId: LOCAL_API.resourceId,
      resourcePath: context.resource,
      stage: context.stage,
    },
    body: request.body.length > 0 ? request.body.toString('utf8') : null,
    isBase64Encoded: false,
  };
}

/** What the server writes back: node's `writeHead` takes the headers as they are. */
export interface LocalHttpResponse {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string[]>>;
  readonly body: Buffer;
}

/** The handler returned something API Gateway would refuse ("Malformed Lambda proxy response"). */
export class MalformedProxyResultError extends Error {
  override readonly name = 'MalformedProxyResultError';
}

type HeaderValue = string | number | boolean;

function isHeaderValue(value: unknown): value is HeaderValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean';
}

/**
 * Turns the handler's result into the HTTP response API Gateway would send. `headers` and `multiValueHeaders`
 * are merged; where both name a header (compared case-insensitively), only the `multiValueHeaders` values are
 * kept, as API Gateway documents. A result API Gateway would reject throws MalformedProxyResultError.
 */
export function toHttpResponse(result: APIGatewayProxyResult): LocalHttpResponse {
  const { statusCode, body } = result as Partial<Record<keyof APIGatewayProxyResult, unknown>>;
  if (
    typeof statusCode !== 'number' ||
    !Number.isInteger(statusCode) ||
    statusCode < 100 ||
    statusCode > 599
  ) {
    throw new MalformedProxyResultError('statusCode must be an integer from 100 to 599');
  }
  if (body !== undefined && body !== null && typeof body !== 'string') {
    throw new MalformedProxyResultError('body must be a string');
  }

  const byLowerName = new Map<string, { name: string; values: string[] }>();
  for (const [name, value] of Object.entries(result.headers ?? {}) as [string, unknown][]) {
    if (!isHeaderValue(value)) throw new MalformedProxyResultError(`header ${name} must be a string`);
    byLowerName.set(name.toLowerCase(), { name, values: [String(value)] });
  }
  const fromMultiValue = new Set<string>();
  for (const [name, values] of Object.entries(result.multiValueHeaders ?? {}) as [string, unknown][]) {
    if (!Array.isArray(values) || !values.every(isHeaderValue)) {
      throw new MalformedProxyResultError(`multi-value header ${name} must be a list of strings`);
    }
    const key = name.toLowerCase();
    const strings = values.map(String);
    const existing = fromMultiValue.has(key) ? byLowerName.get(key) : undefined;
    if (existing) existing.values.push(...strings);
    else byLowerName.set(key, { name, values: strings });
    fromMultiValue.add(key);
  }

  const headers = Object.fromEntries([...byLowerName.values()].map(({ name, values }) => [name, values]));
  const text = body ?? '';
  return {
    statusCode,
    headers,
    body: result.isBase64Encoded === true ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8'),
  };
}
