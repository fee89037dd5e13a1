/**
 * The benchmark's alternative signer (npm run bench -- --only client): the same seam as shared/aws/sigv4.ts over
 * aws4fetch's AwsV4Signer (WebCrypto), swapped into the payment bundle by an esbuild plugin to measure its size and
 * what it costs a cold start. Not part of the product.
 */
import { AwsV4Signer } from 'aws4fetch';
import type { AwsCredentials } from '../../../shared/aws/aws-environment';
import type { SignableRequest, SigningScope } from '../../../shared/aws/sigv4';

export { amzDate } from '../../../shared/aws/sigv4';

export async function signRequest(
  request: SignableRequest,
  credentials: AwsCredentials,
  scope: SigningScope,
  at: Date,
): Promise<Record<string, string>> {
  // aws4fetch signs the URL's host itself.
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => name !== 'Host'));
  const signer = new AwsV4Signer({
    method: request.method,
    url: `https://${request.host}${request.path}`,
    headers,
    body: request.body,
    accessKeyId: credentials.accessKeyId,
    secretAccessKey: credentials.secretAccessKey,
    ...(credentials.sessionToken === undefined ? {} : { sessionToken: credentials.sessionToken }),
    service: scope.service,
    region: scope.region,
    datetime: at.toISOString().replace(/[:-]|\.\d{3}/g, ''),
  });
  const signed = await signer.sign();
  return { Host: request.host, ...Object.fromEntries(signed.headers) };
}
