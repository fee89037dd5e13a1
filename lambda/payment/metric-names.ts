/**
 * The metrics the payment Lambda emits (CloudWatch embedded metric format) and the stack alarms on. Shared by
 * both sides, so a renamed metric cannot leave an alarm watching nothing. Operators build their own alarms on
 * these names: keep them exactly.
 *
 * Every metric: standard resolution, one dimension `Service` (the stack name). No app id, key id, key or secret
 * value ever goes into a metric. Every one is a count of events (unit Count, read with Sum). The levels on-call
 * watches before anyone is refused (SecretFill, KeysExpiringSoon) are the key registry monitor's
 * (lambda/registry-monitor/metric-names.ts), measured over every shard.
 */
export const METRIC = {
  /** One of the eight outcomes below per request: 200. */
  accepted: 'Accepted',
  /** 401: credentials missing, sent twice, unknown app, wrong key, expired key or a network not allowed. */
  unauthorized: 'Unauthorized',
  /** 415: authenticated, but the Content-Type is not application/json. */
  unsupportedMediaType: 'UnsupportedMediaType',
  /** 400: authenticated, but the body is not JSON, or nests too deep. */
  badRequest: 'BadRequest',
  /** 413: authenticated, but the body is over the contract's limit (64 KiB); refused before it is parsed. */
  payloadTooLarge: 'PayloadTooLarge',
  /** 503: the keys cannot be read and no usable copy is cached. */
  unavailable: 'Unavailable',
  /** 500: an unexpected error in the handler. */
  internalError: 'InternalError',
  /** 429: authenticated, but over the app's rate limit (appRateLimit, or the app's own). */
  throttled: 'Throttled',
  /** Per request the rate limiter could not decide in time (DynamoDB slow, throttling, refusing): failed open or closed. */
  rateLimiterUnavailable: 'RateLimiterUnavailable',
  /** Per 401 for a key that matched but had expired (`reason: expired_key`); also counted as Unauthorized. */
  expiredKey: 'ExpiredKey',
  /** Per 401 for a key that matched, sent from outside the app's allowlist (`reason: source_not_allowed`). */
  sourceNotAllowed: 'SourceNotAllowed',
  /** Per attempt to read the keys from Secrets Manager that succeeded. */
  keyRefreshSucceeded: 'KeyRefreshSucceeded',
  /** Per attempt to read the keys from Secrets Manager that failed (unreachable, denied, malformed secret). */
  keyRefreshFailed: 'KeyRefreshFailed',
  /** Per request answered with keys past their cache TTL, because refreshing them failed. */
  staleKeysServed: 'StaleKeysServed',
  /** Once per execution environment. */
  coldStart: 'ColdStart',
} as const;

export type MetricName = (typeof METRIC)[keyof typeof METRIC];

/** The metrics that count events, one at a time (unit Count): every metric of the payment Lambda. */
export type CountedMetricName = MetricName;

/** Each request adds exactly one of these. */
export const OUTCOME_METRICS: readonly CountedMetricName[] = [
  METRIC.accepted,
  METRIC.unauthorized,
  METRIC.unsupportedMediaType,
  METRIC.badRequest,
  METRIC.payloadTooLarge,
  METRIC.unavailable,
  METRIC.internalError,
  METRIC.throttled,
];

export const DEFAULT_METRICS_NAMESPACE = 'PaymentApi';

/** The one dimension of every metric; its value is the stack name, so environments stay apart. */
export const SERVICE_DIMENSION = 'Service';

/** Environment variables the stack sets for the payment Lambda. */
export const METRICS_ENV = {
  /** The CloudWatch namespace of the metrics. */
  namespace: 'METRICS_NAMESPACE',
  /** The stack name: the `Service` dimension's value and the `service` key of every log line. */
  serviceName: 'SERVICE_NAME',
} as const;
