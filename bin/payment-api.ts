/**
 * The CDK app. The only place that reads context: `npx cdk deploy -c keyCacheTtlSeconds=30`, or the "context"
 * object of cdk.json. Every key is optional; CONTEXT_SETTINGS lists them with their defaults.
 */
import { App, Aspects, Duration } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { LogLevel } from '../lambda/shared/logger';
import { KEY_ROTATION_DEFAULTS, KEY_ROTATION_LIMITS, type KeyRotationOptions } from '../lib/key-rotation';
import { PAYMENT_API_DEFAULTS } from '../lib/payment-api';
import { PaymentApiStack, type PaymentApiStackProps } from '../lib/payment-api-stack';

export const STACK_NAME = 'PaymentApi';

/** One context key: the stack prop it sets, its default and meaning (README's configuration table). */
export interface ContextSetting {
  readonly key: string;
  /** The stack prop, or the field of the `rotation` prop, that the key sets. */
  readonly prop: keyof PaymentApiStackProps | `rotation.${keyof KeyRotationOptions}`;
  readonly defaultValue: string;
  readonly meaning: string;
  /**
   * Turns the raw context value into the prop, given the props read from the keys listed before it; throws a
   * message naming the key.
   */
  readonly read: (raw: unknown, before: PaymentApiStackProps) => Partial<PaymentApiStackProps>;
}

type Parse<T> = (raw: unknown, key: string) => T;

function quote(raw: unknown): string {
  return typeof raw === 'string' ? `"${raw}"` : JSON.stringify(raw);
}

const text: Parse<string> = (raw, key) => {
  if (typeof raw !== 'string') throw new Error(`Context "${key}" must be a string, got ${quote(raw)}`);
  return raw;
};

/** `-c key=value` gives strings, cdk.json gives numbers: take either. */
const wholeNumber: Parse<number> = (raw, key) => {
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) return raw;
  if (typeof raw === 'string' && /^\d{1,15}$/.test(raw)) return Number(raw);
  throw new Error(`Context "${key}" must be a whole number, got ${quote(raw)}`);
};

const positiveNumber: Parse<number> = (raw, key) => {
  if (typeof raw === 'number' && Number.isFinite(raw) && raw > 0) return raw;
  if (typeof raw === 'string' && /^\d{1,15}(\.\d+)?$/.test(raw) && Number(raw) > 0) return Number(raw);
  throw new Error(`Context "${key}" must be a positive number, got ${quote(raw)}`);
};

const seconds: Parse<Duration> = (raw, key) => Duration.seconds(wholeNumber(raw, key));

const RETENTION_BY_DAYS: ReadonlyMap<number, RetentionDays> = new Map(
  Object.values(RetentionDays)
    .filter((value): value is RetentionDays => typeof value === 'number')
    .map((retention): [number, RetentionDays] => [retention, retention]),
);

const retentionDays: Parse<RetentionDays> = (raw, key) => {
  const days = wholeNumber(raw, key);
  const retention = RETENTION_BY_DAYS.get(days);
  if (retention === undefined) {
    throw new Error(
      `Context "${key}" must be one of ${[...RETENTION_BY_DAYS.keys()].join(', ')} (days), got ${days}`,
    );
  }
  return retention;
};

const { minKeep } = KEY_ROTATION_LIMITS;
const maxRotationDays = KEY_ROTATION_LIMITS.maxEvery.toDays();

const rotationDays: Parse<number> = (raw, key) => {
  const days = wholeNumber(raw, key);
  if (days < 1 || days > maxRotationDays) {
    throw new Error(
      `Context "${key}" must be a whole number of days from 1 to ${maxRotationDays}, got ${days}`,
    );
  }
  return days;
};

const rotationKeep: Parse<number> = (raw, key) => {
  const keep = wholeNumber(raw, key);
  if (keep < minKeep)
    throw new Error(`Context "${key}" must be a whole number of at least ${minKeep}, got ${keep}`);
  return keep;
};

const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

const logLevel: Parse<LogLevel> = (raw, key) => {
  const level = LOG_LEVELS.find((candidate) => candidate === raw);
  if (level === undefined)
    throw new Error(`Context "${key}" must be one of ${LOG_LEVELS.join(', ')}, got ${quote(raw)}`);
  return level;
};

function setting<P extends keyof PaymentApiStackProps>(
  key: string,
  prop: P,
  parse: Parse<NonNullable<PaymentApiStackProps[P]>>,
  defaultValue: string,
  meaning: string,
): ContextSetting {
  return {
    key,
    prop,
    defaultValue,
    meaning,
    read: (raw) => ({ [prop]: parse(raw, key) }),
  };
}

const D = PAYMENT_API_DEFAULTS;

export const CONTEXT_SETTINGS: readonly ContextSetting[] = [
  setting(
    'existingSecret',
    'existingSecret',
    text,
    'a new secret with a generated key for app `demo`',
    'Name or ARN of an existing keys secret to use instead of creating one.',
  ),
  setting(
    'secretKmsKeyArn',
    'secretKmsKeyArn',
    text,
    '`aws/secretsmanager`',
    'ARN of the customer managed KMS key that encrypts the secret; the Lambda may decrypt with it.',
  ),
  setting(
    'keyCacheTtlSeconds',
    'keyCacheTtl',
    seconds,
    String(D.keyCacheTtl.toSeconds()),
    'Seconds the Lambda keeps the keys before reading the secret again (1 to 3600).',
  ),
  setting(
    'keyMaxStaleSeconds',
    'keyMaxStale',
    seconds,
    String(D.keyMaxStale.toSeconds()),
    'Seconds past the TTL that the last good keys are served while the secret cannot be read (0 to 86400).',
  ),
  setting(
    'throttlingRateLimit',
    'throttlingRateLimit',
    positiveNumber,
    String(D.throttlingRateLimit),
    'Stage throttling: steady requests per second.',
  ),
  setting(
    'throttlingBurstLimit',
    'throttlingBurstLimit',
    wholeNumber,
    String(D.throttlingBurstLimit),
    'Stage throttling: burst size in requests.',
  ),
  setting(
    'stageName',
    'stageName',
    text,
    D.stageName,
    'API Gateway stage, the first segment of the URL path.',
  ),
  setting(
    'logRetentionDays',
    'logRetention',
    retentionDays,
    String(D.logRetention),
    'Retention in days of the Lambda and access log groups (a CloudWatch Logs retention value).',
  ),
  setting(
    'memorySize',
    'memorySize',
    wholeNumber,
    String(D.memorySize),
    'Lambda memory in MiB (128 to 10240).',
  ),
  setting(
    'logLevel',
    'logLevel',
    logLevel,
    D.logLevel,
    'Lowest level the Lambdas log: debug, info, warn or error.',
  ),
  {
    key: 'rotationDays',
    prop: 'rotation.every',
    defaultValue: 'no scheduled rotation',
    meaning: `Turns on scheduled rotation: days between two rotations of the keys secret (1 to ${maxRotationDays}).`,
    read: (raw) => ({ rotation: { every: Duration.days(rotationDays(raw, 'rotationDays')) } }),
  },
  // After rotationDays: it refines the rotation that key turned on.
  {
    key: 'rotationKeep',
    prop: 'rotation.keep',
    defaultValue: String(KEY_ROTATION_DEFAULTS.keep),
    meaning: `Newest keys each app keeps after a scheduled rotation, the fresh one included (at least ${minKeep}).`,
    read: (raw, before) => {
      const keep = rotationKeep(raw, 'rotationKeep');
      if (before.rotation === undefined) {
        throw new Error(
          'Context "rotationKeep" needs "rotationDays": without it there is no scheduled rotation',
        );
      }
      return { rotation: { ...before.rotation, keep } };
    },
  },
];

/** The stack props that the context sets; absent and empty values leave the default. */
export function stackPropsFromContext(tryGetContext: (key: string) => unknown): PaymentApiStackProps {
  let props: PaymentApiStackProps = {};
  for (const { key, read } of CONTEXT_SETTINGS) {
    const raw = tryGetContext(key);
    if (raw === undefined || raw === null || raw === '') continue;
    props = { ...props, ...read(raw, props) };
  }
  return props;
}

export function createApp(app: App = new App()): App {
  const props = stackPropsFromContext((key): unknown => app.node.tryGetContext(key));
  new PaymentApiStack(app, STACK_NAME, {
    ...props,
    description: 'payment-api: API Gateway and a Lambda that checks App-id/App-key against Secrets Manager',
  });
  Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
  return app;
}

// Run by the CDK CLI (cdk.json: npx tsx bin/payment-api.ts); importing the module for its table has no effect.
if (require.main === module) createApp();
