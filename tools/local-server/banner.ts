import { DEMO_APP_ID } from '../../shared/keys/app-id';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { LOCAL_ENV, type LocalRateLimiting } from './local-settings';
import { PAYMENT_RESOURCE } from './routing';

/** A registry of shards as the banner describes it. */
export interface RegistryFacts {
  readonly shards: number;
  /** While a reshard is under way: the count before. */
  readonly previousShards?: number;
  /** App demo's shard (where it is, else its home) and that shard's file or secret. */
  readonly demo: { readonly shard: number; readonly id: string };
  /** A file registry: whether app demo is in it (the ready command reads its key from its shard file). */
  readonly demoPresent?: boolean;
}

/** Where the keys are, once found: a stack names its registry or its one keys secret. */
export type BannerKeys =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'secretsManager'; readonly secretId: string; readonly stackName?: string }
  | { readonly kind: 'registryFile'; readonly path: string; readonly registry: RegistryFacts }
  | {
      readonly kind: 'registry';
      readonly manifestId: string;
      readonly stackName?: string;
      readonly registry: RegistryFacts;
    };

export interface BannerInput {
  /** `http://127.0.0.1:<port>` */
  readonly baseUrl: string;
  readonly pid: number;
  readonly keys: BannerKeys;
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

/** `4 shards`, `8 shards, a reshard from 4 under way` */
export function describeShards(registry: Pick<RegistryFacts, 'shards' | 'previousShards'>): string {
  const count = `${registry.shards} shard${registry.shards === 1 ? '' : 's'}`;
  return registry.previousShards === undefined
    ? count
    : `${count}, a reshard from ${registry.previousShards} under way`;
}

function keysLine(input: BannerInput): string {
  const reread = `re-read every ${input.ttlSeconds} s`;
  const watched =
    input.keysWatched === true ? `re-read as soon as it changes (and every ${input.ttlSeconds} s)` : reread;
  const region = input.awsRegion ?? 'from the AWS config';
  const endpoint = input.awsEndpoint ?? 'the default AWS endpoint';
  const { keys } = input;
  switch (keys.kind) {
    case 'secretsManager': {
      const which =
        keys.stackName === undefined
          ? `Secrets Manager secret ${keys.secretId}`
          : `stack ${keys.stackName}'s keys secret ${keys.secretId} in Secrets Manager`;
      return `keys: ${which} (region ${region}, endpoint ${endpoint}), ${reread}`;
    }
    case 'registry': {
      const which = keys.stackName === undefined ? 'key registry' : `stack ${keys.stackName}'s key registry`;
      return (
        `keys: ${which} ${keys.manifestId} in Secrets Manager, ${describeShards(keys.registry)} ` +
        `(region ${region}, endpoint ${endpoint}), each shard and the manifest ${reread}`
      );
    }
    case 'registryFile':
      return `keys: registry file ${keys.path}, ${describeShards(keys.registry)}, each of its files ${watched}`;
    case 'file': {
      const created = input.generated
        ? `, just created with a new key for app "${input.generated.appId}"`
        : '';
      return `keys: file ${keys.path}${created}, ${watched}`;
    }
  }
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
  const failure = {
    local: "this server counts each app's limit itself",
    open: 'requests go on',
    closed: 'requests get 503',
  }[rateLimiting.failure];
  return (
    `${limit}, counted in DynamoDB table ${rateLimiting.tableName} (region ${region}, endpoint ${endpoint}); ` +
    `when it cannot answer within ${rateLimiting.budgetMs} ms, ${failure} (${rateLimiting.failure})`
  );
}

/** How the ready command hands a key over: never on a command line. */
const TO_CURL = 'to curl on standard input, never on a command line';

function tryLines(input: BannerInput): string[] {
  const appId = input.generated?.appId ?? DEMO_APP_ID;
  const curl = curlCommand(input.baseUrl, appId);
  const { keys } = input;
  switch (keys.kind) {
    case 'file':
      return [
        `try (app ${appId}'s key goes from the file ${TO_CURL}):`,
        `  ${keyHeaderFromFile(keys.path, appId)} | ${curl}`,
      ];
    case 'registryFile': {
      const { demo, demoPresent } = keys.registry;
      const command = `  ${keyHeaderFromFile(demo.id, appId)} | ${curl}`;
      const from = `goes from shard ${demo.shard}'s file ${TO_CURL}`;
      if (demoPresent === true) return [`try (app ${appId}'s key ${from}):`, command];
      return [
        // --plain: the command below reads the key back from the file, which a digest (the default) cannot give.
        `app ${appId} is not in the registry yet: npm run -s keys -- add-app ${appId} --plain --registry-file ` +
          `${shellQuoted(keys.path)} adds it (its key is printed once); then try (its key ${from}):`,
        command,
      ];
    }
    case 'secretsManager':
    case 'registry': {
      const secret =
        keys.kind === 'secretsManager'
          ? `Secrets Manager secret ${keys.secretId}`
          : `Secrets Manager secret ${keys.registry.demo.id} (shard ${keys.registry.demo.shard})`;
      return [
        `try, with APP_KEY set to a key of app ${appId} from ${secret}:`,
        `  printf 'App-key: %s\\n' "$APP_KEY" | ${curl}`,
      ];
    }
  }
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
