import { Duration, Token } from 'aws-cdk-lib';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { METRICS_ENV } from '../lambda/payment/metric-names';
import {
  DEFAULT_CACHE_TTL_SECONDS,
  DEFAULT_KEY_EXPIRY_WARNING_DAYS,
  DEFAULT_MAX_STALE_SECONDS,
  ENV,
  KEY_CACHE_LIMITS,
  KEY_EXPIRY_WARNING_LIMITS,
} from '../lambda/payment/settings';
import { RATE_LIMIT_ENV } from '../lambda/payment/rate-limit/settings';
import { DEFAULT_KEY_PREFIX, keyPrefixProblem } from '../shared/keys/key-format';
import type { LogLevel } from '../shared/logger';
import { createBundledFunction, lambdaEntry } from './bundled-function';
import type { KeyRegistry } from './key-registry';
import type { RateLimitTable, ResolvedAppRateLimit } from './rate-limit-table';
import {
  requireWholeDuration,
  requireWholeNumber,
  type DurationRange,
  type WholeNumberRange,
} from './validation';

/** The handler settings PaymentApi exposes as its own props. */
export interface PaymentFunctionOptions {
  /**
   * How long the Lambda keeps the keys before it asks Secrets Manager again: a change to the secret takes
   * effect within this time. Whole seconds, 1 to 3600.
   * @default Duration.seconds(60)
   */
  readonly keyCacheTtl?: Duration;

  /**
   * How long past the TTL the last good keys are still served while Secrets Manager cannot be read; after
   * that the API answers 503. Whole seconds, 0 to 86400.
   * @default Duration.minutes(15)
   */
  readonly keyMaxStale?: Duration;

  /**
   * How long before a key's expiry it counts in the `KeysExpiringSoon` metric (measured every hour over every
   * shard by the key registry monitor), which raises the alarm of that name: time to hand the partner a new key.
   * Whole days, 1 to 365.
   * @default Duration.days(14)
   */
  readonly keyExpiryWarning?: Duration;

  /**
   * Lambda memory in MiB, 128 to 10240. CPU is allocated in proportion.
   * @default 256
   */
  readonly memorySize?: number;

  /**
   * The prefix of this stack's keys: new keys are `<keyPrefix>_<32 base62><6 base62 CRC32>` (docs/security.md),
   * and a key that starts with `<keyPrefix>_` but is not well formed gets 401 before any lookup. 2 to 16 of
   * `a-z`, `0-9`, `_`; not `payk` (nor `payk_...`), the start of legacy keys, which would all be refused.
   * @default 'pay'
   */
  readonly keyPrefix?: string;

  /**
   * Whether keys without the prefix (made before the key format: legacy keys) are still looked up. With `false`
   * they get 401 before any lookup: set it once every app has a key of the format.
   * @default true
   */
  readonly legacyKeys?: boolean;
}

export const PAYMENT_FUNCTION_DEFAULTS = {
  keyCacheTtl: Duration.seconds(DEFAULT_CACHE_TTL_SECONDS),
  keyMaxStale: Duration.seconds(DEFAULT_MAX_STALE_SECONDS),
  keyExpiryWarning: Duration.days(DEFAULT_KEY_EXPIRY_WARNING_DAYS),
  keyPrefix: DEFAULT_KEY_PREFIX,
  legacyKeys: true,
  memorySize: 256,
} as const satisfies Partial<Record<keyof PaymentFunctionOptions, unknown>>;

export const PAYMENT_FUNCTION_LIMITS = {
  keyCacheTtl: { ...KEY_CACHE_LIMITS.ttlSeconds, unit: 'seconds' } satisfies DurationRange,
  keyMaxStale: { ...KEY_CACHE_LIMITS.maxStaleSeconds, unit: 'seconds' } satisfies DurationRange,
  keyExpiryWarning: { ...KEY_EXPIRY_WARNING_LIMITS.days, unit: 'days' } satisfies DurationRange,
  memorySize: { min: 128, max: 10_240, unit: 'MiB' } satisfies WholeNumberRange,
} as const;

/** The handler's hard limit. A Secrets Manager fetch is capped at 1.5 s (lambda/payment/secrets-manager-source.ts). */
const HANDLER_TIMEOUT = Duration.seconds(10);

/** Throws on the first invalid option. Values that are tokens are left to CloudFormation. */
export function validatePaymentFunctionOptions(options: PaymentFunctionOptions): void {
  const L = PAYMENT_FUNCTION_LIMITS;
  if (options.keyCacheTtl) requireWholeDuration('keyCacheTtl', L.keyCacheTtl, options.keyCacheTtl);
  if (options.keyMaxStale) requireWholeDuration('keyMaxStale', L.keyMaxStale, options.keyMaxStale);
  if (options.keyExpiryWarning) {
    requireWholeDuration('keyExpiryWarning', L.keyExpiryWarning, options.keyExpiryWarning);
  }
  if (options.memorySize !== undefined) requireWholeNumber('memorySize', L.memorySize, options.memorySize);
  if (options.keyPrefix !== undefined && !Token.isUnresolved(options.keyPrefix)) {
    const problem = keyPrefixProblem(options.keyPrefix);
    if (problem !== undefined) throw new Error(`keyPrefix ${problem}, got "${options.keyPrefix}"`);
  }
}

export interface PaymentFunctionProps extends PaymentFunctionOptions {
  /** The key registry the handler reads: its environment (REGISTRY_ENV) and its read grant. */
  readonly registry: Pick<KeyRegistry, 'environment' | 'grantRead'>;
  /** Retention of the handler's log group. */
  readonly logRetention: logs.RetentionDays;
  /** Lowest level the handler logs. */
  readonly logLevel: LogLevel;
  /** Namespace of the metrics the handler emits. */
  readonly metricsNamespace: string;
  /** The `Service` dimension of the handler's metrics: the stack name. */
  readonly serviceName: string;
  /**
   * X-Ray active tracing of the handler.
   * @default false
   */
  readonly tracing?: boolean;
  /**
   * Per-app rate limits: the handler is then built from `lambda/payment/rate-limited.ts` and counts in `table`.
   * @default - no limits: built from `lambda/payment/index.ts`, without the DynamoDB client
   */
  readonly rateLimit?: PaymentFunctionRateLimit;
}

/** The shared counters of the per-app limits, and the limits the handler applies. */
export interface PaymentFunctionRateLimit extends ResolvedAppRateLimit {
  readonly table: RateLimitTable;
}

/** The entry points of the payment Lambda: two, so the bundle without limits carries no DynamoDB client. */
export const PAYMENT_ENTRIES = {
  withoutRateLimit: lambdaEntry('payment', 'index.ts'),
  withRateLimit: lambdaEntry('payment', 'rate-limited.ts'),
} as const;

/** What the rate-limited entry reads (lambda/payment/rate-limit/settings.ts); RATE_LIMIT_DEADLINE_MS is for tests. */
function rateLimitEnvironment({
  table,
  defaultLimit,
  failure,
}: PaymentFunctionRateLimit): Record<string, string> {
  return {
    [RATE_LIMIT_ENV.table]: table.table.tableName,
    [RATE_LIMIT_ENV.perSecond]: String(defaultLimit.perSecond),
    [RATE_LIMIT_ENV.burst]: String(defaultLimit.burst),
    [RATE_LIMIT_ENV.failure]: failure,
  };
}

/**
 * The payment Lambda, allowed to read the key registry's shards (and, with per-app limits, to update the rate
 * limit counters) and nothing else beyond its own log group. Created in `scope` as `<id>`, `<id>Logs` and `<id>Role`
 * (see createBundledFunction), where PaymentApi has always had them.
 */
export function createPaymentFunction(
  scope: Construct,
  id: string,
  props: PaymentFunctionProps,
): NodejsFunction {
  validatePaymentFunctionOptions(props);
  const ttl = props.keyCacheTtl ?? PAYMENT_FUNCTION_DEFAULTS.keyCacheTtl;
  const maxStale = props.keyMaxStale ?? PAYMENT_FUNCTION_DEFAULTS.keyMaxStale;
  const { rateLimit } = props;
  const handler = createBundledFunction(scope, id, {
    entry: rateLimit ? PAYMENT_ENTRIES.withRateLimit : PAYMENT_ENTRIES.withoutRateLimit,
    description: rateLimit
      ? 'payment-api: authenticates POST /payment by App-id/App-key against Secrets Manager, then limits each app'
      : 'payment-api: authenticates POST /payment by App-id/App-key against Secrets Manager',
    roleDescription: rateLimit
      ? 'payment-api handler: writes its own log group, reads the keys secret and updates the rate limit counters'
      : 'payment-api handler: writes its own log group and reads the keys secret',
    memorySize: props.memorySize ?? PAYMENT_FUNCTION_DEFAULTS.memorySize,
    timeout: HANDLER_TIMEOUT,
    logRetention: props.logRetention,
    // Settings only: the keys themselves are read from Secrets Manager at run time. The registry's variables
    // start with KEYS_SECRET_ID, shard 0, as the single secret's ARN always came first.
    environment: {
      ...props.registry.environment,
      [ENV.cacheTtlSeconds]: String(ttl.toSeconds()),
      [ENV.maxStaleSeconds]: String(maxStale.toSeconds()),
      [ENV.logLevel]: props.logLevel,
      [METRICS_ENV.namespace]: props.metricsNamespace,
      [METRICS_ENV.serviceName]: props.serviceName,
      [ENV.keyPrefix]: props.keyPrefix ?? PAYMENT_FUNCTION_DEFAULTS.keyPrefix,
      [ENV.legacyKeys]: String(props.legacyKeys ?? PAYMENT_FUNCTION_DEFAULTS.legacyKeys),
      ...(rateLimit && rateLimitEnvironment(rateLimit)),
    },
    tracing: props.tracing,
  });

  // With a customer key, `kms:Decrypt` when Secrets Manager asks for it on the handler's behalf. Granted on the
  // role, so it also works for imported keys, whose key policy this stack cannot change.
  props.registry.grantRead(handler);
  rateLimit?.table.grantCounterUpdates(handler);
  return handler;
}
