import { createHash, createHmac } from 'node:crypto';
import type { AwsCredentials } from './aws-environment';

/**
 * AWS Signature Version 4 for one request to a JSON service (not S3, whose paths and payloads sign differently), in
 * a few lines of node:crypto: synchronous, no package (mhart's `aws4`, which it replaces, made 8 KB of the payment
 * bundle). Proved against AWS's published test suite (sigv4.test.ts) and against the SDK's own
 * @smithy/signature-v4 for every partition and endpoint (sdk-differential.test.ts); aws4fetch (WebCrypto) is
 * measured against it in `npm run bench -- --only client`. What is signed is exactly the headers given, plus
 * X-Amz-Date and, with temporary credentials, X-Amz-Security-Token.
 */

export interface SignableRequest {
  readonly method: string;
  /** The Host header: the endpoint's host, with its port when it is not the scheme's default. */
  readonly host: string;
  /** Percent-encoded, as a URL's pathname is; no query. */
  readonly path: string;
  /** Every header to sign and send, Host included. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface SigningScope {
  readonly region: string;
  readonly service: string;
}

/** `20150830T123600Z`: SigV4's time format. */
export function amzDate(at: Date): string {
  return at.toISOString().replace(/[:-]|\.\d{3}/g, '');
}

/** Headers left unsigned (aws4's list; the SDK's is longer): a proxy on the way may change them. */
const UNSIGNED_HEADERS = new Set([
  'authorization',
  'connection',
  'x-amzn-trace-id',
  'user-agent',
  'expect',
  'presigned-expires',
  'range',
]);

const hmac = (key: string | Buffer, text: string): Buffer => createHmac('sha256', key).update(text).digest();
const hexHash = (text: string): string => createHash('sha256').update(text).digest('hex');

/** encodeURIComponent, and RFC 3986's reserved characters it leaves as they are. */
const encodeRfc3986 = (text: string): string =>
  encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The canonical URI of a service other than S3: empty segments and dot segments removed, then every segment encoded
 * once more (the path arrives percent-encoded), as aws4 and the SDK write it.
 */
function canonicalPath(path: string): string {
  if (path === '/') return path;
  // Anything a URI may not hold as it is (a URL's pathname keeps `|`, `^`, `[` raw) is encoded first.
  const encoded = /[^0-9A-Za-z;,/?:@&=+$\-_.!~*'()#%]/.test(path) ? encodeURI(decodeURI(path)) : path;
  const segments: string[] = [];
  for (const segment of encoded.replace(/\/{2,}/g, '/').split('/')) {
    if (segment === '..') segments.pop();
    else if (segment !== '.') segments.push(encodeRfc3986(segment));
  }
  const canonical = segments.join('/');
  return canonical.startsWith('/') ? canonical : `/${canonical}`;
}

/** Signing keys by secret and scope: four HMACs saved per request, as aws4's cache saved them. A handful at most. */
const signingKeys = new Map<string, Buffer>();

/** The key of SigV4's scope `<date>/<region>/<service>/aws4_request`, derived once per secret, scope and day. */
function signingKey(secretAccessKey: string, date: string, scope: SigningScope): Buffer {
  const id = [secretAccessKey, date, scope.region, scope.service].join('\n');
  let key = signingKeys.get(id);
  if (key === undefined) {
    key = hmac(hmac(hmac(hmac(`AWS4${secretAccessKey}`, date), scope.region), scope.service), 'aws4_request');
    if (signingKeys.size >= 16) signingKeys.clear();
    signingKeys.set(id, key);
  }
  return key;
}

/**
 * The headers to send: the request's, X-Amz-Date, X-Amz-Security-Token (temporary credentials) and Authorization.
 * A promise, though it signs synchronously: the seam also takes a WebCrypto signer (aws4fetch), as the bench does.
 */
export function signRequest(
  request: SignableRequest,
  credentials: AwsCredentials,
  scope: SigningScope,
  at: Date,
): Promise<Record<string, string>> {
  const datetime = amzDate(at);
  const headers: Record<string, string> = {
    ...request.headers,
    'X-Amz-Date': datetime,
    ...(credentials.sessionToken === undefined ? {} : { 'X-Amz-Security-Token': credentials.sessionToken }),
  };
  const signed = Object.entries(headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim().replace(/\s+/g, ' ')] as const)
    .filter(([name]) => !UNSIGNED_HEADERS.has(name))
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const signedNames = signed.map(([name]) => name).join(';');
  const canonicalRequest = [
    request.method,
    canonicalPath(request.path),
    '',
    ...signed.map(([name, value]) => `${name}:${value}`),
    '',
    signedNames,
    hexHash(request.body),
  ].join('\n');
  const date = datetime.slice(0, 8);
  const credentialScope = `${date}/${scope.region}/${scope.service}/aws4_request`;
  const signature = createHmac('sha256', signingKey(credentials.secretAccessKey, date, scope))
    .update(['AWS4-HMAC-SHA256', datetime, credentialScope, hexHash(canonicalRequest)].join('\n'))
    .digest('hex');
  return Promise.resolve({
    ...headers,
    Authorization: `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${credentialScope}, SignedHeaders=${signedNames}, Signature=${signature}`,
  });
}
