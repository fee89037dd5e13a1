import { RequestSigner } from 'aws4';
import type { AwsCredentials } from './aws-environment';

/**
 * AWS Signature Version 4 for one request, by mhart's `aws4` (node:crypto, synchronous, 9 KB bundled): measured
 * against aws4fetch (WebCrypto) and the SDK's own @smithy/signature-v4 in `npm run bench -- --only client`.
 * This module only decides what is signed: exactly the headers given, plus X-Amz-Date and, with temporary
 * credentials, X-Amz-Security-Token; aws4 adds nothing of its own (doNotModifyHeaders).
 */

export interface SignableRequest {
  readonly method: string;
  /** The Host header: the endpoint's host, with its port when it is not the scheme's default. */
  readonly host: string;
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

/**
 * The headers to send: the request's, X-Amz-Date, X-Amz-Security-Token (temporary credentials) and Authorization.
 * A promise, though aws4 signs synchronously: the seam also takes a WebCrypto signer (aws4fetch), as the bench does.
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
  const signer = new RequestSigner(
    {
      method: request.method,
      host: request.host,
      path: request.path,
      headers,
      body: request.body,
      service: scope.service,
      region: scope.region,
      doNotModifyHeaders: true,
    },
    { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
  );
  // Without this aws4 would sign with its own clock (doNotModifyHeaders skips reading X-Amz-Date).
  signer.datetime = datetime;
  return Promise.resolve({ ...headers, Authorization: signer.authHeader() });
}
