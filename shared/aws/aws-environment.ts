/**
 * Where the small AWS client sends a call, and with which credentials, read from the environment as the AWS SDK for
 * JavaScript reads it, for the two services and three partitions the payment Lambda needs. Pure: no I/O, no SDK.
 *
 * Honoured, as the SDK honours them: AWS_REGION; the partition's hostnames (aws, aws-cn, aws-us-gov);
 * AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL (an empty value counts as unset); AWS_IGNORE_CONFIGURED_ENDPOINT_URLS;
 * AWS_USE_FIPS_ENDPOINT; AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
 * Refused with one line rather than ignored: a region of another partition (aws-iso*, aws-eusc) or a global
 * pseudo-region, AWS_USE_DUALSTACK_ENDPOINT=true, DynamoDB's AWS_ACCOUNT_ID_ENDPOINT_MODE=required, FIPS with an
 * endpoint URL (the SDK refuses that too), an endpoint URL that is not http(s), a boolean that is not true or false.
 * docs/configuration.md lists them.
 */

/** An AWS JSON protocol service, as the SDK's model describes it. */
export interface AwsJsonService {
  /** In messages. */
  readonly name: string;
  /** The SDK's service id, for AWS_ENDPOINT_URL_<ID>. */
  readonly endpointVariable: string;
  /** The first label of the service's hostname, and its SigV4 signing name. */
  readonly endpointPrefix: string;
  readonly signingName: string;
  /** X-Amz-Target is `<targetPrefix>.<Operation>`. */
  readonly targetPrefix: string;
  readonly contentType: 'application/x-amz-json-1.0' | 'application/x-amz-json-1.1';
  /** DynamoDB's endpoints in aws-us-gov are FIPS endpoints already: the SDK's rules keep the plain hostname there. */
  readonly fipsHostnameInGovCloud: 'fips' | 'standard';
}

export const AWS_JSON_SERVICES = {
  secretsManager: {
    name: 'Secrets Manager',
    endpointVariable: 'AWS_ENDPOINT_URL_SECRETS_MANAGER',
    endpointPrefix: 'secretsmanager',
    signingName: 'secretsmanager',
    targetPrefix: 'secretsmanager',
    contentType: 'application/x-amz-json-1.1',
    fipsHostnameInGovCloud: 'fips',
  },
  dynamoDb: {
    name: 'DynamoDB',
    endpointVariable: 'AWS_ENDPOINT_URL_DYNAMODB',
    endpointPrefix: 'dynamodb',
    signingName: 'dynamodb',
    targetPrefix: 'DynamoDB_20120810',
    contentType: 'application/x-amz-json-1.0',
    fipsHostnameInGovCloud: 'standard',
  },
} as const satisfies Record<string, AwsJsonService>;

export type AwsJsonServiceName = keyof typeof AWS_JSON_SERVICES;

export interface AwsCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
}

/** Gives the credentials to sign with; called before each attempt, so a provider that refreshes is honoured. */
export type CredentialProvider = () => Promise<AwsCredentials>;

/** Where one service's calls go, and the region they are signed for. */
export interface AwsTarget {
  /** The endpoint: scheme, host, port and base path. */
  readonly url: URL;
  readonly region: string;
}

export type EnvironmentVariables = Readonly<Record<string, string | undefined>>;

/** A setting is either usable, or the one line that says why not. */
export type Resolved<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly problem: string };

const ok = <T>(value: T): Resolved<T> => ({ ok: true, value });
const refused = <T>(problem: string): Resolved<T> => ({ ok: false, problem });

export const ENV_NAMES = {
  region: 'AWS_REGION',
  endpointUrl: 'AWS_ENDPOINT_URL',
  ignoreConfiguredEndpointUrls: 'AWS_IGNORE_CONFIGURED_ENDPOINT_URLS',
  useFips: 'AWS_USE_FIPS_ENDPOINT',
  useDualStack: 'AWS_USE_DUALSTACK_ENDPOINT',
  accountIdEndpointMode: 'AWS_ACCOUNT_ID_ENDPOINT_MODE',
  accessKeyId: 'AWS_ACCESS_KEY_ID',
  secretAccessKey: 'AWS_SECRET_ACCESS_KEY',
  sessionToken: 'AWS_SESSION_TOKEN',
} as const;

/** The partitions the client supports, by the SDK's region patterns (partitions.json); any other region is aws's. */
const PARTITIONS = [
  { id: 'aws-us-gov', pattern: /^us-gov-\w+-\d+$/, dnsSuffix: 'amazonaws.com' },
  { id: 'aws-cn', pattern: /^cn-\w+-\d+$/, dnsSuffix: 'amazonaws.com.cn' },
] as const;
const AWS_PARTITION = { id: 'aws', dnsSuffix: 'amazonaws.com' } as const;
export const SUPPORTED_PARTITIONS = ['aws', 'aws-cn', 'aws-us-gov'] as const;

/** The SDK knows these partitions too; their hostnames are not this client's. */
const OTHER_PARTITIONS: readonly { readonly id: string; readonly pattern: RegExp }[] = [
  { id: 'aws-iso', pattern: /^us-iso-\w+-\d+$/ },
  { id: 'aws-iso-b', pattern: /^us-isob-\w+-\d+$/ },
  { id: 'aws-iso-e', pattern: /^eu-isoe-\w+-\d+$/ },
  { id: 'aws-iso-f', pattern: /^us-isof-\w+-\d+$/ },
  { id: 'aws-eusc', pattern: /^eusc-de-\w+-\d+$/ },
];

/** A region as a hostname label: lower-case letters, digits and hyphens (the SDK refuses anything else too). */
const REGION_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/** `true`, `false` or unset, as the SDK's boolean settings; anything else is refused. */
function readBoolean(env: EnvironmentVariables, name: string): Resolved<boolean> {
  const raw = nonEmpty(env[name]);
  if (raw === undefined || raw === 'false') return ok(false);
  if (raw === 'true') return ok(true);
  return refused(`${name} must be "true" or "false", got "${raw.slice(0, 20)}"`);
}

/** The region's partition, or why this client cannot call it. */
function partitionOf(region: string): Resolved<{ readonly id: string; readonly dnsSuffix: string }> {
  if (region.endsWith('-global')) {
    return refused(
      `${ENV_NAMES.region} "${region}" is a global pseudo-region: name a region such as eu-west-1`,
    );
  }
  const other = OTHER_PARTITIONS.find((partition) => partition.pattern.test(region));
  if (other !== undefined) {
    return refused(
      `${ENV_NAMES.region} "${region}" is in the ${other.id} partition: the payment Lambda's client calls ` +
        `${SUPPORTED_PARTITIONS.join(', ')} only`,
    );
  }
  return ok(PARTITIONS.find((partition) => partition.pattern.test(region)) ?? AWS_PARTITION);
}

/** AWS_REGION as the SDK reads it (AWS_DEFAULT_REGION is the CLI's, not the SDK's). */
export function readRegion(env: EnvironmentVariables): Resolved<string> {
  const region = nonEmpty(env[ENV_NAMES.region]);
  if (region === undefined) {
    return refused(`${ENV_NAMES.region} is not set: the region is missing (AWS_DEFAULT_REGION is not read)`);
  }
  if (!REGION_LABEL.test(region)) {
    return refused(
      `${ENV_NAMES.region} must be a region name such as eu-west-1, got "${region.slice(0, 40)}"`,
    );
  }
  return ok(region);
}

/** An endpoint URL from the environment: absolute http(s), without user, query or fragment. */
function readEndpointUrl(name: string, raw: string): Resolved<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return refused(`${name} is not a URL: it must be http:// or https:// followed by a host`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return refused(
      `${name} must be an http:// or https:// URL, got one of scheme "${url.protocol.slice(0, -1)}"`,
    );
  }
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return refused(`${name} must hold a scheme, a host, a port and a path only (no user, query or fragment)`);
  }
  return ok(url);
}

/** The endpoint variable that applies to `service`, with its name, or undefined (AWS_IGNORE_... counts). */
function configuredEndpoint(
  env: EnvironmentVariables,
  service: AwsJsonService,
): Resolved<{ readonly name: string; readonly raw: string } | undefined> {
  const ignore = readBoolean(env, ENV_NAMES.ignoreConfiguredEndpointUrls);
  if (!ignore.ok) return ignore;
  if (ignore.value) return ok(undefined);
  for (const name of [service.endpointVariable, ENV_NAMES.endpointUrl]) {
    const raw = nonEmpty(env[name]);
    if (raw !== undefined) return ok({ name, raw });
  }
  return ok(undefined);
}

/**
 * Where `service`'s calls go in `env`, by the SDK's rules: the configured endpoint URL if any (never with FIPS, which
 * the SDK refuses too), else `https://<prefix>[-fips].<region>.<partition's DNS suffix>/`.
 */
export function resolveTarget(env: EnvironmentVariables, service: AwsJsonService): Resolved<AwsTarget> {
  const region = readRegion(env);
  if (!region.ok) return region;
  const partition = partitionOf(region.value);
  if (!partition.ok) return partition;
  const fips = readBoolean(env, ENV_NAMES.useFips);
  if (!fips.ok) return fips;
  const dualStack = readBoolean(env, ENV_NAMES.useDualStack);
  if (!dualStack.ok) return dualStack;
  if (dualStack.value) {
    return refused(
      `${ENV_NAMES.useDualStack}=true is not supported by the payment Lambda's client (IPv4 endpoints only)`,
    );
  }
  if (
    service === AWS_JSON_SERVICES.dynamoDb &&
    nonEmpty(env[ENV_NAMES.accountIdEndpointMode]) === 'required'
  ) {
    return refused(
      `${ENV_NAMES.accountIdEndpointMode}=required is not supported by the payment Lambda's client (it calls DynamoDB's regional endpoint)`,
    );
  }
  const configured = configuredEndpoint(env, service);
  if (!configured.ok) return configured;
  if (configured.value !== undefined) {
    if (fips.value) {
      return refused(
        `${ENV_NAMES.useFips}=true and ${configured.value.name} together: FIPS and a custom endpoint are not supported`,
      );
    }
    const url = readEndpointUrl(configured.value.name, configured.value.raw);
    return url.ok ? ok({ url: url.value, region: region.value }) : url;
  }
  const fipsLabel =
    fips.value && !(partition.value.id === 'aws-us-gov' && service.fipsHostnameInGovCloud === 'standard');
  const host = `${service.endpointPrefix}${fipsLabel ? '-fips' : ''}.${region.value}.${partition.value.dnsSuffix}`;
  return ok({ url: new URL(`https://${host}/`), region: region.value });
}

/** The credentials Lambda gives every function, from its environment; never a value in the problem line. */
export function readEnvironmentCredentials(env: EnvironmentVariables): Resolved<AwsCredentials> {
  const accessKeyId = nonEmpty(env[ENV_NAMES.accessKeyId]);
  const secretAccessKey = nonEmpty(env[ENV_NAMES.secretAccessKey]);
  const missing = [
    ...(accessKeyId === undefined ? [ENV_NAMES.accessKeyId] : []),
    ...(secretAccessKey === undefined ? [ENV_NAMES.secretAccessKey] : []),
  ];
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    return refused(
      `credentials are missing: ${missing.join(' and ')} ${missing.length === 1 ? 'is' : 'are'} not set ` +
        '(the payment Lambda reads credentials from its environment only)',
    );
  }
  const sessionToken = nonEmpty(env[ENV_NAMES.sessionToken]);
  return ok({ accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) });
}

/** What the payment Lambda's clients need: a target per service, and the credentials to sign with. */
export interface AwsAccess<S extends AwsJsonServiceName = AwsJsonServiceName> {
  readonly targets: Readonly<Record<S, AwsTarget>>;
  readonly credentials: CredentialProvider;
}

/**
 * Everything the Lambda needs to call `services`, from its environment, or the first problem, as one line naming
 * the variable (never a credential's value). Read once, at start.
 */
export function readAwsAccess<S extends AwsJsonServiceName>(
  env: EnvironmentVariables,
  services: readonly S[],
): Resolved<AwsAccess<S>> {
  const targets: Partial<Record<S, AwsTarget>> = {};
  for (const service of services) {
    const target = resolveTarget(env, AWS_JSON_SERVICES[service]);
    if (!target.ok) return target;
    targets[service] = target.value;
  }
  const credentials = readEnvironmentCredentials(env);
  if (!credentials.ok) return credentials;
  const fixed = credentials.value;
  return ok({ targets: targets as Record<S, AwsTarget>, credentials: () => Promise.resolve(fixed) });
}
