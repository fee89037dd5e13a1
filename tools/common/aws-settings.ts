import type { CallBounds } from '../../shared/aws/bounded-client';
import { nonEmpty } from './args';
import type { Env } from './tool-io';

/** The AWS services the tools call: the name their messages use, and the variable of the service's own endpoint. */
export const AWS_SERVICES = {
  secretsManager: { name: 'Secrets Manager', endpointVariable: 'AWS_ENDPOINT_URL_SECRETS_MANAGER' },
  cloudFormation: { name: 'CloudFormation', endpointVariable: 'AWS_ENDPOINT_URL_CLOUDFORMATION' },
  dynamoDb: { name: 'DynamoDB', endpointVariable: 'AWS_ENDPOINT_URL_DYNAMODB' },
} as const;

export type AwsService = (typeof AWS_SERVICES)[keyof typeof AWS_SERVICES];

/**
 * Bounds on each AWS call of an operator's command, looser than the payment Lambda's (PAYMENT_CALL_BOUNDS): it
 * may run far from the region, and nobody waits on an HTTP answer. Worst case per call: 3 attempts of at most
 * 3 s each plus the SDK's back-off, and never more than the 10 s deadline.
 */
export const OPERATOR_CALL_BOUNDS: CallBounds = {
  maxAttempts: 3,
  connectionTimeoutMs: 2_000,
  attemptTimeoutMs: 3_000,
  callDeadlineMs: 10_000,
};

/** What an SDK client is told explicitly; anything absent comes from the SDK's own sources (profile, SSO, IMDS). */
export interface AwsClientSettings {
  readonly region?: string;
  readonly endpoint?: string;
  readonly profile?: string;
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken?: string;
  };
}

/**
 * The client settings for `service` in the operator's environment `env`, read as the AWS CLI reads them: region
 * from AWS_REGION, else AWS_DEFAULT_REGION (which the JavaScript SDK alone would ignore); endpoint from the
 * service's own AWS_ENDPOINT_URL_<SERVICE>, else AWS_ENDPOINT_URL; AWS_PROFILE; static credentials only when
 * both AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are set. An empty variable counts as unset. Pure.
 */
export function readAwsClientSettings(env: Env, service: AwsService): AwsClientSettings {
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  const endpoint = nonEmpty(env[service.endpointVariable]) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  const profile = nonEmpty(env.AWS_PROFILE);
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  return {
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(profile === undefined ? {} : { profile }),
    ...(accessKeyId === undefined || secretAccessKey === undefined
      ? {}
      : {
          credentials: {
            accessKeyId,
            secretAccessKey,
            ...(sessionToken === undefined ? {} : { sessionToken }),
          },
        }),
  };
}

/** The variables the SDK itself reads from the process, where an empty value must mean "not set". */
const SDK_READ_VARIABLES = ['AWS_REGION', 'AWS_PROFILE'] as const;

/**
 * Called just before a client is built. Standard error carries one-line errors only, so the SDK's notice about
 * the Node versions of its future releases is turned off; and the SDK falls back to AWS_REGION and AWS_PROFILE in
 * process.env when given no value, taking "" as a value ("Region not accepted: region=\"\" is not a valid hostname
 * component"), so empty ones are removed.
 */
function prepareProcessEnvForSdk(): void {
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  for (const name of SDK_READ_VARIABLES) {
    if (process.env[name] === '') Reflect.deleteProperty(process.env, name);
  }
}

/** The settings of a client of `service` built from `env`, with the process made ready for the SDK first. */
export function operatorClientSettings(env: Env, service: AwsService): AwsClientSettings {
  prepareProcessEnvForSdk();
  return readAwsClientSettings(env, service);
}

/** The region a client resolved (from its settings or the profile), or undefined when it has none. */
export async function resolvedRegion(client: {
  readonly config: { region: () => Promise<string> };
}): Promise<string | undefined> {
  try {
    return nonEmpty(await client.config.region());
  } catch {
    return undefined;
  }
}
