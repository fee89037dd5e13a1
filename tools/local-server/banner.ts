import { DEMO_APP_ID } from '../../shared/keys/app-id';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { LOCAL_ENV, type KeysLocation, type LocalRateLimiting } from './local-settings';
import { PAYMENT_RESOURCE } from './routing';

export interface BannerInput {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly pid: number;
  readonly keys: KeysLocation;
  /** Set only when the server has just generated this key. It is never printed: the command reads it from the file. */
  readonly generated?: { readonly appId: string; readonly key: string };
  readonly ttlSeconds: number;
  /** Whether the key file is watched, so that a change applies at once. Default false. */
  readonly keysWatched?: boolean;
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

/** A word for POSIX shells, single-quoted. */
export function shellQuoted(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/**
 * A ready-to-paste request that reads the `App-key` header line from standard input (`-H @-`), so the key shows
 * neither in shell history nor in the process list: the way README and docs/contract.md call the API.
 */
export function curlCommand(baseUrl: string, appId: string): string {
  return (
    `curl -i -X POST ${baseUrl}${PAYMENT_RESOURCE} -H 'Content-Type: application/json' ` +
    `-H ${shellQuoted(`App-id: ${appId}`)} -H @- -d '{}'`
  );
}

/**
 * Prints `App-key: <the first key of the app>` from a key file, for `curlCommand` to read: the key goes from the file
 * to curl through a pipe. Reads the secret's three shapes of entry (a list of keys, of key objects, an app object).
 */
export function keyHeaderFromFile(path: string, appId: string): string {
  const entry = `require(${JSON.stringify(path)})[${JSON.stringify(appId)}]`;
  return `node -p ${shellQuoted(`const a = ${entry}, k = (Array.isArray(a) ? a : a.keys)[0]; "App-key: " + (k.key ?? k)`)}`;
}

function keysLine(input: BannerInput): string {
  const reread = `re-read every ${input.ttlSeconds} s`;
  if (input.keys.kind === 'secretsManager') {
    const region = input.awsRegion ?? 'from the AWS config';
    const endpoint = input.awsEndpoint ?? 'the default AWS endpoint';
    return `keys: Secrets Manager secret ${input.keys.secretId} (region ${region}, endpoint ${endpoint}), ${reread}`;
  }
  const created = input.generated ? `, just created with a new key for app "${input.generated.appId}"` : '';
  const when =
    input.keysWatched === true ? `re-read as soon as it changes (and every ${input.ttlSeconds} s)` : reread;
  return `keys: file ${input.keys.path}${created}, ${when}`;
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

function tryLines(input: BannerInput): string[] {
  const appId = input.generated?.appId ?? DEMO_APP_ID;
  const curl = curlCommand(input.baseUrl, appId);
  if (input.keys.kind === 'file') {
    return [
      `try (app ${appId}'s key goes from the file to curl on standard input, never on a command line):`,
      `  ${keyHeaderFromFile(input.keys.path, appId)} | ${curl}`,
    ];
  }
  return [
    `try, with APP_KEY set to a key of app ${appId} from Secrets Manager secret ${input.keys.secretId}:`,
    `  printf 'App-key: %s\\n' "$APP_KEY" | ${curl}`,
  ];
}

/** What the server prints once it listens. Never a key: the command it suggests reads one. */
export function startupLines(input: BannerInput): string[] {
  return [
    keysLine(input),
    rateLimitLine(input),
    ...tryLines(input),
    `${LISTENING_PREFIX} ${input.baseUrl} (pid ${input.pid}); stop with Ctrl-C`,
  ];
}
