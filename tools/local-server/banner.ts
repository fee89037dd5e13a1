import { DEMO_APP_ID } from '../../shared/keys/app-id';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { LOCAL_ENV, type KeysLocation, type LocalRateLimiting } from './local-settings';
import { PAYMENT_RESOURCE } from './routing';

export interface BannerInput {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly pid: number;
  readonly keys: KeysLocation;
  /** Set only when the server has just generated this key: the one key it may ever print. */
  readonly generated?: { readonly appId: string; readonly key: string };
  readonly ttlSeconds: number;
  /** AWS_REGION / AWS_DEFAULT_REGION and AWS_ENDPOINT_URL, for the Secrets Manager line. */
  readonly awsRegion?: string;
  readonly awsEndpoint?: string;
  /** Default: no limits. */
  readonly rateLimiting?: LocalRateLimiting;
  /** The limiter's DynamoDB region and endpoint, when it counts in a table. */
  readonly limiterRegion?: string;
  readonly limiterEndpoint?: string;
}

/** The first line tests and scripts wait for. */
export const LISTENING_PREFIX = 'payment-api local server listening on';

/** A ready-to-paste request. Header values are single-quoted for POSIX shells. */
export function curlCommand(baseUrl: string, appId: string, appKey: string): string {
  return (
    `curl -i -X POST ${baseUrl}${PAYMENT_RESOURCE} -H 'Content-Type: application/json' ` +
    `-H 'App-id: ${appId}' -H 'App-key: ${appKey}'`
  );
}

function keysLine(input: BannerInput): string {
  if (input.keys.kind === 'secretsManager') {
    const region = input.awsRegion ?? 'from the AWS config';
    const endpoint = input.awsEndpoint ?? 'the default AWS endpoint';
    return `keys: Secrets Manager secret ${input.keys.secretId} (region ${region}, endpoint ${endpoint}), re-read every ${input.ttlSeconds} s`;
  }
  const created = input.generated ? `, just created with a new key for app "${input.generated.appId}"` : '';
  return `keys: file ${input.keys.path}${created}, re-read every ${input.ttlSeconds} s`;
}

/** `20/s, burst 40`: the words the key CLI's list uses. */
export function describeLimit(limit: RateLimit): string {
  return `${limit.perSecond}/s, burst ${limit.burst}`;
}

function rateLimitLine(input: BannerInput): string {
  const rateLimiting = input.rateLimiting ?? { kind: 'off' };
  if (rateLimiting.kind === 'off') {
    return `rate limits: off (set ${LOCAL_ENV.appRateLimit} to apply one to every app; an app's own rateLimit is not enforced)`;
  }
  const limit = `rate limits: ${describeLimit(rateLimiting.defaultLimit)} for every app without a rateLimit of its own`;
  if (rateLimiting.kind === 'memory') return `${limit}, counted in this process`;
  const region = input.limiterRegion ?? 'from the AWS config';
  const endpoint = input.limiterEndpoint ?? 'the default AWS endpoint';
  const failure = rateLimiting.failure === 'open' ? 'requests go on' : 'requests get 503';
  return (
    `${limit}, counted in DynamoDB table ${rateLimiting.tableName} (region ${region}, endpoint ${endpoint}); ` +
    `when it cannot answer within ${rateLimiting.deadlineMs} ms, ${failure} (${rateLimiting.failure})`
  );
}

function tryLine(input: BannerInput): string {
  if (input.generated) return curlCommand(input.baseUrl, input.generated.appId, input.generated.key);
  const where =
    input.keys.kind === 'file' ? input.keys.path : `Secrets Manager secret ${input.keys.secretId}`;
  return curlCommand(input.baseUrl, DEMO_APP_ID, `<a key of app ${DEMO_APP_ID}, from ${where}>`);
}

/** What the server prints once it listens. No key appears unless `generated` is set. */
export function startupLines(input: BannerInput): string[] {
  return [
    keysLine(input),
    rateLimitLine(input),
    'try:',
    `  ${tryLine(input)}`,
    `${LISTENING_PREFIX} ${input.baseUrl} (pid ${input.pid}); stop with Ctrl-C`,
  ];
}
