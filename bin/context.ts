/**
 * The context keys of the CDK app: one row each in CONTEXT_SETTINGS (docs/configuration.md's table mirrors it),
 * and readContext, which turns the whole context into the stack's name and props or into one line per problem.
 */
import { Duration } from 'aws-cdk-lib';
import { LOG_LEVELS } from '../shared/logger';
import { DOMAIN_NAME, CERTIFICATE_ARN, HOSTED_ZONE_ID } from '../lib/domain';
import { FIREWALL_LIMITS, WEB_ACL_ARN } from '../lib/firewall';
import { KEY_REGISTRY_DEFAULTS, previousShardsProblem } from '../lib/key-registry';
import { KEY_ROTATION_DEFAULTS, KEY_ROTATION_LIMITS } from '../lib/key-rotation';
import { DEMO_APP_NEEDS_A_NEW_SECRET } from '../lib/keys-secret';
import { ALARM_EMAIL, METRICS_NAMESPACE, MONITORING_DEFAULTS, MONITORING_LIMITS } from '../lib/monitoring';
import { PAYMENT_API_DEFAULTS, PAYMENT_API_LIMITS, STAGE_NAME } from '../lib/payment-api';
import { APP_RATE_LIMIT_DEFAULTS } from '../lib/rate-limit-table';
import { SCANNING_ACTIONS, SECRET_SCANNING_DEFAULTS, type ScanningAction } from '../lib/secret-scanning';
import { keysUrlProblem } from '../lambda/secret-scanning/settings';
import { LIMITER_FAILURES, type LimiterFailure } from '../lambda/payment/rate-limit/settings';
import { burstProblem, perSecondProblem, RATE_LIMIT_LIMITS } from '../shared/keys/rate-limit';
import { KEY_SHARDS_LIMITS, shardCountProblem } from '../shared/keys/registry';
import { DEFAULT_KEY_PREFIX, KEY_PREFIX_RULE, keyPrefixProblem } from '../shared/keys/key-format';
import {
  KMS_KEY_ARN,
  secretReferenceFormat,
  TOPIC_ARN,
  type PaymentApiStackProps,
  type StackMonitoringOptions,
} from '../lib/payment-api-stack';
import { nearest } from '../shared/nearest';
import { CDK_QUALIFIER, REGION_NAME } from '../lib/pipeline/bootstrap-roles';
import { OIDC_PROVIDER_ARN } from '../lib/pipeline/github-oidc-provider';
import { GITHUB_REPOSITORY, GITHUB_REPOSITORY_IDS, parseRepositoryIds } from '../lib/pipeline/github-subject';
import { describeValue, type TextFormat } from '../lib/validation';
import {
  boolean,
  checkedNumber,
  checkedText,
  checkedWord,
  InvalidValue,
  listOf,
  matching,
  numberBetween,
  oneOf,
  positiveNumber,
  retentionDays,
  seconds,
  wholeNumber,
  type Parser,
} from './context-values';

export const DEFAULT_STACK_NAME = 'PaymentApi';

/**
 * Valid in a stack name and every name derived from it, and short: `PaymentApi-<env>` stays within 35
 * characters, leaving room for the suffixes of derived names (web ACL names allow 128 characters, CloudWatch
 * alarm and dashboard names 255).
 */
export const ENVIRONMENT_NAME: TextFormat = {
  pattern: /^[A-Za-z](?:[A-Za-z0-9-]{0,22}[A-Za-z0-9])?$/,
  description: '1 to 24 letters, digits or hyphens, starting with a letter and not ending with a hyphen',
};

export function stackNameFor(env: string | undefined): string {
  return env === undefined ? DEFAULT_STACK_NAME : `${DEFAULT_STACK_NAME}-${env}`;
}

/** What the context asks for: which stack to make, and its props. */
export interface AppConfig {
  readonly stackName: string;
  /** The environment, when `env` is set. */
  readonly env?: string;
  readonly props: PaymentApiStackProps;
  /** With `envs`: one stack per environment, each read as `-c env=<name>` would be. */
  readonly envs?: readonly string[];
  /** With `githubRepository`: the PaymentApiPipelineAccess stack's settings (bin/payment-api.ts adds it). */
  readonly pipelineAccess?: PipelineAccessConfig;
}

/** The pipeline access stack's settings as the context gives them. */
export interface PipelineAccessConfig {
  readonly githubRepository?: string;
  readonly repositoryIds?: { readonly ownerId: string; readonly repositoryId: string };
  readonly existingOidcProviderArn?: string;
  readonly stages?: readonly string[];
  readonly regions?: readonly string[];
}

/** The stages a pipeline has unless `pipelineStages` says otherwise. */
export const DEFAULT_PIPELINE_STAGES: readonly string[] = ['staging', 'production'];

/** Other keys a key only makes sense with (or without), and why, for the one-line message. */
export interface KeyRelation {
  readonly keys: readonly string[];
  readonly because: string;
}

/** One context key, as docs/configuration.md's table shows it, and how it is read. */
export interface ContextSetting {
  readonly key: string;
  /** The stack prop, or field of one, that the key sets (or what else it decides). */
  readonly sets: string;
  readonly defaultValue: string;
  readonly meaning: string;
  /** Keys that must be set too, whenever this one is set to anything but `false`. */
  readonly needs?: KeyRelation;
  /** Keys that must not be set with this one. */
  readonly excludes?: KeyRelation;
  /** Parses a raw value; throws InvalidValue. */
  read(raw: unknown): ReadValue;
}

interface ReadValue {
  /** False for the value `false`: a switch that is off needs nothing else. */
  readonly on: boolean;
  /** Puts the value into the configuration read so far (the rows above); throws InvalidValue. */
  apply(config: AppConfig): AppConfig;
}

interface Row<T> extends Omit<ContextSetting, 'read'> {
  readonly parse: Parser<T>;
  readonly apply: (value: T, config: AppConfig) => AppConfig;
}

function setting<T>({ parse, apply, ...described }: Row<T>): ContextSetting {
  return {
    ...described,
    read: (raw) => {
      const value = parse(raw);
      return { on: value !== false, apply: (config) => apply(value, config) };
    },
  };
}

function withProps(config: AppConfig, props: PaymentApiStackProps): AppConfig {
  return { ...config, props: { ...config.props, ...props } };
}

type PropRow<P extends keyof PaymentApiStackProps> = Omit<
  Row<NonNullable<PaymentApiStackProps[P]>>,
  'sets' | 'apply'
> & { readonly prop: P };

/** A key that sets one stack prop to its parsed value. */
function prop<P extends keyof PaymentApiStackProps>({ prop: name, ...row }: PropRow<P>): ContextSetting {
  return setting({ ...row, sets: name, apply: (value, config) => withProps(config, { [name]: value }) });
}

type MonitoringRow<F extends keyof StackMonitoringOptions> = Omit<
  Row<NonNullable<StackMonitoringOptions[F]>>,
  'sets' | 'apply'
> & { readonly field: F };

/** A key that sets one field of the stack's `monitoring` prop to its parsed value. */
function monitoringField<F extends keyof StackMonitoringOptions>({
  field,
  ...row
}: MonitoringRow<F>): ContextSetting {
  return setting({
    ...row,
    sets: `monitoring.${field}`,
    apply: (value, config) =>
      withProps(config, { monitoring: { ...config.props.monitoring, [field]: value } }),
  });
}

function withPipeline(config: AppConfig, fields: PipelineAccessConfig): AppConfig {
  return { ...config, pipelineAccess: { ...config.pipelineAccess, ...fields } };
}

type PipelineRow<F extends keyof PipelineAccessConfig> = Omit<
  Row<NonNullable<PipelineAccessConfig[F]>>,
  'sets' | 'apply'
> & { readonly field: F };

/** A key that sets one field of the pipeline access stack's settings. */
function pipelineField<F extends keyof PipelineAccessConfig>({
  field,
  ...row
}: PipelineRow<F>): ContextSetting {
  return setting({
    ...row,
    sets: `pipelineAccess.${field}`,
    apply: (value, config) => withPipeline(config, { [field]: value }),
  });
}

const D = PAYMENT_API_DEFAULTS;
const L = PAYMENT_API_LIMITS;
const minKeep = KEY_ROTATION_LIMITS.keep.min;
const maxKeep = KEY_ROTATION_LIMITS.keep.max;
/** Context counts rotation in days; the construct takes any whole number of hours in Secrets Manager's range. */
const maxRotationDays = KEY_ROTATION_LIMITS.everyHours.max / 24;
const rateLimit = FIREWALL_LIMITS.rateLimit;
const M = MONITORING_DEFAULTS;
const ML = MONITORING_LIMITS;

export const CONTEXT_SETTINGS: readonly ContextSetting[] = [
  setting({
    key: 'env',
    sets: 'the stack name, environmentName',
    parse: matching(ENVIRONMENT_NAME),
    apply: (env, config) => ({
      ...withProps(config, { environmentName: env }),
      env,
      stackName: stackNameFor(env),
    }),
    defaultValue: `none: the stack is \`${DEFAULT_STACK_NAME}\``,
    meaning: `The environment: the stack becomes \`${DEFAULT_STACK_NAME}-<env>\`, so environments deploy side by side (${ENVIRONMENT_NAME.description}).`,
  }),
  prop({
    key: 'existingSecret',
    prop: 'existingSecret',
    parse: matching(secretReferenceFormat),
    defaultValue: 'a new secret (see `createDemoApp`)',
    meaning: 'Name or ARN of an existing keys secret to use instead of creating one.',
  }),
  prop({
    key: 'createDemoApp',
    prop: 'createDemoApp',
    parse: boolean,
    excludes: { keys: ['existingSecret'], because: DEMO_APP_NEEDS_A_NEW_SECRET },
    defaultValue: '`true` without `env`, `false` with it',
    meaning:
      'Whether a new secret starts with a generated key for app `demo`. Changing it on a deployed stack regenerates the secret, replacing every key: a stack deployed before this key existed must keep `true`.',
  }),
  prop({
    key: 'secretKmsKeyArn',
    prop: 'secretKmsKeyArn',
    parse: matching(KMS_KEY_ARN),
    defaultValue: '`aws/secretsmanager`',
    meaning: 'ARN of the customer managed KMS key that encrypts the secret; the Lambda may decrypt with it.',
  }),
  prop({
    key: 'keyCacheTtlSeconds',
    prop: 'keyCacheTtl',
    parse: seconds(L.keyCacheTtl),
    defaultValue: String(D.keyCacheTtl.toSeconds()),
    meaning: `Seconds the Lambda keeps the keys before reading the secret again (${L.keyCacheTtl.min} to ${L.keyCacheTtl.max}).`,
  }),
  prop({
    key: 'keyMaxStaleSeconds',
    prop: 'keyMaxStale',
    parse: seconds(L.keyMaxStale),
    defaultValue: String(D.keyMaxStale.toSeconds()),
    meaning: `Seconds past the TTL that the last good keys are served while the secret cannot be read (${L.keyMaxStale.min} to ${L.keyMaxStale.max}).`,
  }),
  setting({
    key: 'keyExpiryWarningDays',
    sets: 'keyExpiryWarning',
    parse: wholeNumber(L.keyExpiryWarning),
    apply: (days, config) => withProps(config, { keyExpiryWarning: Duration.days(days) }),
    defaultValue: String(D.keyExpiryWarning.toDays()),
    meaning: `Days before a key's expiry that it counts in \`KeysExpiringSoon\`, which raises the alarm of that name (${L.keyExpiryWarning.min} to ${L.keyExpiryWarning.max}).`,
  }),
  prop({
    key: 'keyShards',
    prop: 'keyShards',
    parse: checkedNumber(shardCountProblem),
    defaultValue: String(KEY_REGISTRY_DEFAULTS.keyShards),
    meaning: `How many secrets hold the keys (${KEY_SHARDS_LIMITS.min} to ${KEY_SHARDS_LIMITS.max}): shard 0 is the keys secret, the stack creates shards 1 and up as \`payment-api/<stack>/keys/shard-<i>\`. Changing it on a deployed stack moves apps: set \`keyShardsPrevious\` too, then reshard.`,
  }),
  setting({
    key: 'keyShardsPrevious',
    sets: 'keyShardsPrevious',
    parse: checkedNumber(shardCountProblem),
    apply: (previous, config) => {
      const problem = previousShardsProblem(
        previous,
        config.props.keyShards ?? KEY_REGISTRY_DEFAULTS.keyShards,
      );
      if (problem !== undefined) throw new InvalidValue(`${problem}, got ${describeValue(previous)}`);
      return withProps(config, { keyShardsPrevious: previous });
    },
    defaultValue: 'no reshard under way',
    meaning: `Only while a reshard is under way: the shard count apps were placed by before (${KEY_SHARDS_LIMITS.min} to ${KEY_SHARDS_LIMITS.max}, not \`keyShards\`). Readers also look in an app's shard under it, so none is missed while apps move.`,
  }),
  prop({
    key: 'keyPrefix',
    prop: 'keyPrefix',
    parse: checkedWord(keyPrefixProblem),
    defaultValue: `\`${DEFAULT_KEY_PREFIX}\`, in every environment`,
    meaning: `The prefix of this stack's keys, \`<prefix>_<32 base62><6 base62 CRC32>\` (${KEY_PREFIX_RULE}; not \`payk\`, the start of legacy keys). A key starting with \`<prefix>_\` that is not well formed gets 401 before any lookup. Output as \`KeyPrefix\`.`,
  }),
  prop({
    key: 'legacyKeys',
    prop: 'legacyKeys',
    parse: boolean,
    defaultValue: 'true',
    meaning:
      'With `false`, keys without the prefix (made before the key format) get 401 before any lookup: set it once every app has a key of the format.',
  }),
  prop({
    key: 'throttlingRateLimit',
    prop: 'throttlingRateLimit',
    parse: positiveNumber(L.throttlingRateLimit.unit),
    defaultValue: String(D.throttlingRateLimit),
    meaning: 'Stage throttling: steady requests per second.',
  }),
  prop({
    key: 'throttlingBurstLimit',
    prop: 'throttlingBurstLimit',
    parse: wholeNumber(L.throttlingBurstLimit),
    defaultValue: String(D.throttlingBurstLimit),
    meaning: 'Stage throttling: burst size in requests.',
  }),
  setting({
    key: 'appRateLimit',
    sets: 'appRateLimit.perSecond',
    parse: checkedNumber(perSecondProblem),
    apply: (perSecond, config) =>
      withProps(config, { appRateLimit: { ...config.props.appRateLimit, perSecond } }),
    defaultValue: 'no per-app limits',
    meaning: `Turns on per-app rate limits (a DynamoDB table): requests per second each authenticated app may make (${RATE_LIMIT_LIMITS.perSecond.min} to ${RATE_LIMIT_LIMITS.perSecond.max}), unless its app object in the secret has a \`rateLimit\` of its own; over it, 429.`,
  }),
  setting({
    key: 'appRateBurst',
    sets: 'appRateLimit.burst',
    parse: checkedNumber(burstProblem),
    apply: (burst, config) =>
      config.props.appRateLimit
        ? withProps(config, { appRateLimit: { ...config.props.appRateLimit, burst } })
        : config,
    needs: { keys: ['appRateLimit'], because: 'without it there are no per-app limits' },
    defaultValue: '`appRateLimit` rounded up',
    meaning: `Requests an app may make in each window of burst / appRateLimit seconds, at once if it likes (${RATE_LIMIT_LIMITS.burst.min} to ${RATE_LIMIT_LIMITS.burst.max}).`,
  }),
  setting<LimiterFailure>({
    key: 'appRateLimitFailure',
    sets: 'appRateLimit.failure',
    parse: oneOf(LIMITER_FAILURES),
    apply: (failure, config) =>
      config.props.appRateLimit
        ? withProps(config, { appRateLimit: { ...config.props.appRateLimit, failure } })
        : config,
    needs: { keys: ['appRateLimit'], because: 'without it there are no per-app limits' },
    defaultValue: APP_RATE_LIMIT_DEFAULTS.failure,
    meaning: `When the limiter cannot reach DynamoDB in time: \`local\` counts in each execution environment against the app's limit (an app gets at most environments × its limit), \`open\` lets the request through uncounted, \`closed\` answers 503 (${LIMITER_FAILURES.join(', ')}).`,
  }),
  prop({
    key: 'stageName',
    prop: 'stageName',
    parse: matching(STAGE_NAME),
    defaultValue: D.stageName,
    meaning: 'API Gateway stage, the first segment of the execute-api URL path.',
  }),
  prop({
    key: 'logRetentionDays',
    prop: 'logRetention',
    parse: retentionDays,
    defaultValue: String(D.logRetention),
    meaning: 'Retention in days of the Lambda and access log groups (a CloudWatch Logs retention value).',
  }),
  prop({
    key: 'memorySize',
    prop: 'memorySize',
    parse: wholeNumber(L.memorySize),
    defaultValue: String(D.memorySize),
    meaning: `Lambda memory in MiB (${L.memorySize.min} to ${L.memorySize.max}).`,
  }),
  prop({
    key: 'logLevel',
    prop: 'logLevel',
    parse: oneOf(LOG_LEVELS),
    defaultValue: D.logLevel,
    meaning: `Lowest level the Lambdas log: ${LOG_LEVELS.join(', ')}.`,
  }),
  setting({
    key: 'rotationDays',
    sets: 'rotation.every',
    parse: wholeNumber({ min: 1, max: maxRotationDays, unit: 'days' }),
    apply: (days, config) =>
      withProps(config, { rotation: { ...config.props.rotation, every: Duration.days(days) } }),
    defaultValue: 'no scheduled rotation',
    meaning: `Turns on scheduled rotation: days between two rotations of the keys secret (1 to ${maxRotationDays}).`,
  }),
  setting({
    key: 'rotationKeep',
    sets: 'rotation.keep',
    parse: wholeNumber(KEY_ROTATION_LIMITS.keep),
    apply: (keep, config) =>
      config.props.rotation ? withProps(config, { rotation: { ...config.props.rotation, keep } }) : config,
    needs: { keys: ['rotationDays'], because: 'without it there is no scheduled rotation' },
    defaultValue: String(KEY_ROTATION_DEFAULTS.keep),
    meaning: `Keys valid right after a scheduled rotation, the fresh one included (${minKeep} to ${maxKeep}): each rotation sets an app's other keys to expire keep - 1 periods later.`,
  }),
  setting({
    key: 'wafRateLimit',
    sets: 'waf.rateLimit',
    parse: wholeNumber(rateLimit),
    apply: (limit, config) => withProps(config, { waf: { rateLimit: limit } }),
    defaultValue: 'no web ACL',
    meaning: `Turns on a new WAF web ACL: requests one IP address may make in 5 minutes (${rateLimit.min} to ${rateLimit.max}), plus AWS managed rules.`,
  }),
  prop({
    key: 'webAclArn',
    prop: 'webAclArn',
    parse: matching(WEB_ACL_ARN),
    excludes: { keys: ['wafRateLimit'], because: 'the stage takes one web ACL, a new one or yours' },
    defaultValue: 'no web ACL',
    meaning: 'ARN of an existing regional WAF web ACL to associate with the stage instead.',
  }),
  prop({
    key: 'domainName',
    prop: 'domainName',
    parse: matching(DOMAIN_NAME),
    needs: {
      keys: ['certificateArn'],
      because: 'API Gateway serves a custom domain only with its certificate',
    },
    defaultValue: 'no custom domain',
    meaning: 'A custom domain serving the API at its root: `https://<domainName>/payment`.',
  }),
  prop({
    key: 'certificateArn',
    prop: 'certificateArn',
    parse: matching(CERTIFICATE_ARN),
    needs: { keys: ['domainName'], because: 'the certificate is for the custom domain' },
    defaultValue: 'none',
    meaning: "ARN of the ACM certificate for `domainName`, in the stack's region.",
  }),
  prop({
    key: 'hostedZoneId',
    prop: 'hostedZoneId',
    parse: matching(HOSTED_ZONE_ID),
    needs: {
      keys: ['hostedZoneName', 'domainName'],
      because: 'the alias record for the custom domain goes in the zone named by both',
    },
    defaultValue: 'no DNS record',
    meaning: 'Route 53 hosted zone that gets an alias A record for `domainName`.',
  }),
  setting({
    key: 'hostedZoneName',
    sets: 'hostedZoneName',
    parse: matching(DOMAIN_NAME),
    apply: (zoneName, config) => {
      const domainName = config.props.domainName;
      if (domainName !== undefined && domainName !== zoneName && !domainName.endsWith(`.${zoneName}`)) {
        throw new InvalidValue(`must be "${domainName}" or a parent domain of it, got "${zoneName}"`);
      }
      return withProps(config, { hostedZoneName: zoneName });
    },
    needs: {
      keys: ['hostedZoneId', 'domainName'],
      because: 'the alias record for the custom domain goes in the zone named by both',
    },
    defaultValue: 'none',
    meaning: 'The name of that hosted zone, such as `example.com`.',
  }),
  prop({
    key: 'disableExecuteApiEndpoint',
    prop: 'disableExecuteApiEndpoint',
    parse: boolean,
    needs: {
      keys: ['domainName'],
      because: 'with the default endpoint closed, the custom domain is the only way in',
    },
    defaultValue: 'false',
    meaning: 'With `true`, only the custom domain answers; the execute-api URL is closed.',
  }),
  monitoringField({
    key: 'metricsNamespace',
    field: 'metricsNamespace',
    parse: matching(METRICS_NAMESPACE),
    defaultValue: M.metricsNamespace,
    meaning: "CloudWatch namespace of the Lambda's metrics (letters, digits, `. _ - / # :`; not `AWS/...`).",
  }),
  monitoringField({
    key: 'alarmEmail',
    field: 'alarmEmail',
    parse: matching(ALARM_EMAIL),
    defaultValue: 'no topic',
    meaning: 'Creates an encrypted SNS topic for alarm and recovery notices, with this address subscribed.',
  }),
  monitoringField({
    key: 'alarmTopicArn',
    field: 'alarmTopicArn',
    parse: matching(TOPIC_ARN),
    excludes: {
      keys: ['alarmEmail'],
      because: 'notices go to one topic: subscribe the address to your topic instead',
    },
    defaultValue: 'no topic',
    meaning: 'An existing standard SNS topic for alarm and recovery notices, instead.',
  }),
  monitoringField({
    key: 'unauthorizedAlarmThreshold',
    field: 'unauthorizedAlarmThreshold',
    parse: wholeNumber(ML.unauthorizedAlarmThreshold),
    defaultValue: String(M.unauthorizedAlarmThreshold),
    meaning: `401s in 5 minutes that raise \`UnauthorizedRequests\` (${ML.unauthorizedAlarmThreshold.min} to ${ML.unauthorizedAlarmThreshold.max}).`,
  }),
  setting({
    key: 'latencyAlarmThresholdMs',
    sets: 'monitoring.latencyAlarmThreshold',
    parse: wholeNumber(ML.latencyAlarmThreshold),
    apply: (ms, config) =>
      withProps(config, {
        monitoring: { ...config.props.monitoring, latencyAlarmThreshold: Duration.millis(ms) },
      }),
    defaultValue: String(M.latencyAlarmThreshold.toMilliseconds()),
    meaning: `API p99 latency in ms that, exceeded 5 minutes in a row, raises \`ApiLatencyP99\` (${ML.latencyAlarmThreshold.min} to ${ML.latencyAlarmThreshold.max}).`,
  }),
  monitoringField({
    key: 'serverErrorRateAlarmThreshold',
    field: 'serverErrorRateAlarmThreshold',
    parse: numberBetween(ML.serverErrorRateAlarmThreshold),
    defaultValue: String(M.serverErrorRateAlarmThreshold),
    meaning: 'Percent of 5XX answers that, exceeded in 3 of 5 minutes, raises `ApiServerErrors`.',
  }),
  prop({
    key: 'tracing',
    prop: 'tracing',
    parse: boolean,
    defaultValue: 'false',
    meaning: 'With `true`, X-Ray traces the stage and the Lambda.',
  }),
  setting({
    key: 'secretScanning',
    sets: 'secretScanning',
    parse: boolean,
    apply: (on, config) =>
      on ? withProps(config, { secretScanning: { ...config.props.secretScanning } }) : config,
    defaultValue: 'false',
    meaning:
      "With `true`, `POST /secret-scanning` takes GitHub's secret scanning reports of this stack's keys: a function of its own verifies GitHub's signature and ends (or reports) each key found, notifying the alarm topic.",
  }),
  setting({
    key: 'secretScanningKeysUrl',
    sets: 'secretScanning.keysUrl',
    parse: checkedText(keysUrlProblem),
    apply: (keysUrl, config) =>
      config.props.secretScanning
        ? withProps(config, { secretScanning: { ...config.props.secretScanning, keysUrl } })
        : config,
    needs: { keys: ['secretScanning'], because: 'without it there is no secret scanning endpoint' },
    defaultValue: `\`${SECRET_SCANNING_DEFAULTS.keysUrl}\``,
    meaning:
      "Where GitHub's public keys for secret scanning are fetched: https, or plain http to a loopback address (tests only).",
  }),
  setting<ScanningAction>({
    key: 'secretScanningAction',
    sets: 'secretScanning.action',
    parse: oneOf(SCANNING_ACTIONS),
    apply: (action, config) =>
      config.props.secretScanning
        ? withProps(config, { secretScanning: { ...config.props.secretScanning, action } })
        : config,
    needs: { keys: ['secretScanning'], because: 'without it there is no secret scanning endpoint' },
    defaultValue: SECRET_SCANNING_DEFAULTS.action,
    meaning: `What a reported key of this stack does: \`revoke\` ends it in its shard at once, \`report\` only notifies and logs (${SCANNING_ACTIONS.join(', ')}).`,
  }),
  // The pipeline (docs/deployment.md#from-a-pipeline): several environments in one synth, and the access stack.
  setting({
    key: 'envs',
    sets: 'the stacks: one per environment',
    parse: listOf(ENVIRONMENT_NAME),
    apply: (envs, config) => ({ ...config, envs }),
    excludes: { keys: ['env'], because: '"envs" names every environment to synthesize' },
    defaultValue: 'one stack (see `env`)',
    meaning: `Several environments in one cloud assembly, such as \`staging,production\`: one stack each, \`${DEFAULT_STACK_NAME}-<env>\`, exactly as \`-c env=<env>\` makes it (its \`cdk.json\` entry included), so a pipeline synthesizes once and deploys the same assembly to every stage.`,
  }),
  pipelineField({
    key: 'githubRepository',
    field: 'githubRepository',
    parse: matching(GITHUB_REPOSITORY),
    defaultValue: 'no pipeline access stack',
    meaning: `Adds the stack \`PaymentApiPipelineAccess\` (deploy it by name): the GitHub OIDC provider and the roles a GitHub Actions pipeline of this repository (\`<owner>/<repo>\`) may assume. Without it the app is as before.`,
  }),
  setting({
    key: 'githubRepositoryIds',
    sets: 'pipelineAccess.repositoryIds',
    parse: matching(GITHUB_REPOSITORY_IDS),
    apply: (ids, config) => withPipeline(config, { repositoryIds: parseRepositoryIds(ids) }),
    needs: { keys: ['githubRepository'], because: 'the ids are of that repository' },
    defaultValue: 'the name form of `sub`',
    meaning:
      "`<owner id>/<repository id>`: the roles trust GitHub's immutable subject claim (`repo:<owner>@<id>/<repo>@<id>:...`) instead of names, which a new owner could take.",
  }),
  pipelineField({
    key: 'githubOidcProviderArn',
    field: 'existingOidcProviderArn',
    parse: matching(OIDC_PROVIDER_ARN),
    needs: { keys: ['githubRepository'], because: 'the provider is for the pipeline access stack' },
    defaultValue: 'a new provider',
    meaning:
      "The account's existing GitHub OIDC provider, imported rather than created (an account has one per URL).",
  }),
  pipelineField({
    key: 'pipelineStages',
    field: 'stages',
    parse: listOf(ENVIRONMENT_NAME),
    needs: { keys: ['githubRepository'], because: "the stages are the pipeline access stack's" },
    defaultValue: DEFAULT_PIPELINE_STAGES.join(','),
    meaning: 'The GitHub environments, each an `env`: a deploy role and a smoke-test role for each.',
  }),
  pipelineField({
    key: 'pipelineRegions',
    field: 'regions',
    parse: listOf(REGION_NAME),
    needs: { keys: ['githubRepository'], because: "the Regions are the pipeline access stack's" },
    defaultValue: "the access stack's Region",
    meaning: `The Regions the pipeline deploys to: the roles may use the CDK bootstrap roles there (qualifier: \`@aws-cdk/core:bootstrapQualifier\`, ${CDK_QUALIFIER.description}).`,
  }),
];

/**
 * Context keys the CDK itself sets or reads, never settings of this app: the CLI's and library's own
 * (`aws:cdk:*`), feature flags (`@aws-cdk/*`, `@aws-cdk-containers/*`, the old `aws-cdk:*`), lookup results
 * cached in cdk.context.json (`<provider>:account=…:region=…`), and two keys `cdk acknowledge` and
 * `cdk cli-telemetry` store.
 */
const CDK_KEY_PREFIXES = ['aws:cdk:', '@aws-cdk/', '@aws-cdk-containers/', 'aws-cdk:'];
const CDK_KEYS = ['acknowledged-issue-numbers', 'cli-telemetry'];
const CDK_LOOKUP_KEY = /^[a-z][a-z0-9-]*:.*=/;

export function isCdkContextKey(key: string): boolean {
  return (
    CDK_KEY_PREFIXES.some((prefix) => key.startsWith(prefix)) ||
    CDK_KEYS.includes(key) ||
    CDK_LOOKUP_KEY.test(key)
  );
}

export function nearestKey(key: string): string {
  return nearest(
    key,
    CONTEXT_SETTINGS.map((row) => row.key),
  );
}

/** Every problem with the context, one line each, in the order found. */
export class ContextError extends Error {
  override readonly name = 'ContextError';

  constructor(readonly problems: readonly string[]) {
    super(problems.join('\n'));
  }
}

function quoteKeys(keys: readonly string[]): string {
  return keys.map((key) => `"${key}"`).join(' and ');
}

function isUnset(raw: unknown): boolean {
  return raw === undefined || raw === null || raw === '';
}

/** Each setting that is on whose companion keys are missing or conflict, in one line each. */
function companionProblems(
  on: ReadonlySet<string>,
  set: ReadonlySet<string>,
  named: (key: string) => string,
): string[] {
  const problems: string[] = [];
  for (const row of CONTEXT_SETTINGS) {
    if (!on.has(row.key)) continue;
    const missing = row.needs?.keys.filter((key) => !set.has(key)) ?? [];
    if (row.needs && missing.length > 0) {
      problems.push(`${named(row.key)} needs ${quoteKeys(missing)}: ${row.needs.because}`);
    }
    const conflicting = row.excludes?.keys.filter((key) => set.has(key)) ?? [];
    if (row.excludes && conflicting.length > 0) {
      problems.push(
        `${named(row.key)} cannot be used with ${quoteKeys(conflicting)}: ${row.excludes.because}`,
      );
    }
  }

  return problems;
}

/**
 * The stack name and props the context asks for. Absent, null and empty values leave the default. Throws a
 * ContextError listing every unknown key (with the nearest known one), every invalid value and every missing
 * or conflicting companion key, each naming the key as the user typed it.
 */
export function readContext(
  context: Readonly<Record<string, unknown>>,
  origins: ReadonlyMap<string, string> = new Map(),
): AppConfig {
  /** `context "key"`, and where the value came from when not from the context itself (an environments entry). */
  const named = (key: string): string => {
    const origin = origins.get(key);
    return origin === undefined ? `context "${key}"` : `context "${key}" (from ${origin})`;
  };
  const problems: string[] = [];
  const known = new Set(CONTEXT_SETTINGS.map((row) => row.key));
  for (const key of Object.keys(context)) {
    if (!known.has(key) && !isCdkContextKey(key)) {
      problems.push(`context "${key}" is not a setting of this app; did you mean "${nearestKey(key)}"?`);
    }
  }

  const set = new Set<string>();
  const on = new Set<string>();
  let config: AppConfig = { stackName: DEFAULT_STACK_NAME, props: {} };
  for (const row of CONTEXT_SETTINGS) {
    const raw = context[row.key];
    if (isUnset(raw)) continue;
    set.add(row.key);
    on.add(row.key);
    try {
      const value = row.read(raw);
      if (!value.on) on.delete(row.key);
      config = value.apply(config);
    } catch (error) {
      if (!(error instanceof InvalidValue)) throw error;
      problems.push(`${named(row.key)} ${error.message}`);
    }
  }

  problems.push(...companionProblems(on, set, named));

  if (problems.length > 0) throw new ContextError(problems);
  return config;
}
