import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  authenticate,
  readCredentials,
  type AuthDecision,
  type KeyRuleFailureReason,
} from '../../shared/keys/authenticate';
import { KeysUnavailableError, type KeyringProvider } from './key-cache';
import {
  DEFAULT_KEY_FORMAT_POLICY,
  screenCredentials,
  type KeyFormatPolicy,
} from '../../shared/keys/credential-screen';
import { describeError, type LogFields, type Logger } from '../../shared/logger';
import { contentTypeProblem } from './media-type';
import { METRIC, type CountedMetricName } from './metric-names';
import { NO_METRICS, type MetricsRecorder } from './metrics-recorder';
import { readProxyRequest } from './proxy-request';
import { readJsonBody } from './request-body';
import { limitedHeaders, rateLimitHeaders } from './rate-limit/headers';
import type { LimiterFailure, RateLimiter } from './rate-limit/limiter';
import type { Keyring } from '../../shared/keys/keyring';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { errorResponse, jsonResponse, SUCCESS_BODY, UNAUTHORIZED_HEADERS } from '../../shared/api/responses';

export interface HandlerDependencies {
  readonly keys: KeyringProvider;
  readonly logger: Logger;
  /** Counts each request's outcome, and answers from stale keys. Default: counts nowhere. */
  readonly metrics?: MetricsRecorder;
  /** The clock keys expire by, read at each request. Default Date.now. */
  readonly now?: () => number;
  /** Per-app rate limits. Default: none (a rateLimit in the secret is then not enforced, and a warning says so). */
  readonly limits?: RequestLimits;
  /** The stack's key prefix and whether legacy keys are looked up. Default: prefix `pay`, legacy keys accepted. */
  readonly keyFormat?: KeyFormatPolicy;
}

/** How requests are counted against their app's limit. */
export interface RequestLimits {
  readonly limiter: RateLimiter;
  /** Every app's limit, unless the secret gives it one of its own. */
  readonly defaultLimit: RateLimit;
  /** When the limiter cannot answer: the request goes on (open) or gets 503 (closed). */
  readonly failure: LimiterFailure;
}

/**
 * Takes `unknown`: that is what the Lambda runtime can hand over (any JSON), and readProxyRequest makes sense of
 * it. An API Gateway REST proxy event is one such value.
 */
export type PaymentHandler = (event: unknown) => Promise<APIGatewayProxyResult>;

/** The metric each refusal counts under. */
const REFUSAL_METRICS: Readonly<
  Record<
    | 'unauthorized'
    | 'tooManyRequests'
    | 'unavailable'
    | 'unsupportedMediaType'
    | 'payloadTooLarge'
    | 'badRequest',
    CountedMetricName
  >
> = {
  unauthorized: METRIC.unauthorized,
  tooManyRequests: METRIC.throttled,
  // Only the limiter's, failing closed; keys that cannot be read are an error, logged as one below.
  unavailable: METRIC.unavailable,
  unsupportedMediaType: METRIC.unsupportedMediaType,
  payloadTooLarge: METRIC.payloadTooLarge,
  badRequest: METRIC.badRequest,
};

/** Keyrings already warned about: a limit in the secret with no limiter to enforce it is said once per refresh. */
const warnedUnenforcedLimits = new WeakSet<Keyring>();

function warnOfUnenforcedLimits(keyring: Keyring, logger: Logger): void {
  if (warnedUnenforcedLimits.has(keyring)) return;
  warnedUnenforcedLimits.add(keyring);
  const apps = [...keyring.values()].filter((app) => app.rateLimit !== undefined).length;
  if (apps > 0) {
    logger.warn('rate limits in the secret are not enforced: the stack has no appRateLimit (no limiter)', {
      apps,
    });
  }
}

/**
 * The refusals of a key that matched, counted beside Unauthorized: the dashboard shows them, since each means a
 * partner to call (one still using a key past its expiry, one calling from a network it has not declared).
 */
const KEY_RULE_METRICS: Readonly<Record<KeyRuleFailureReason, CountedMetricName>> = {
  expired_key: METRIC.expiredKey,
  source_not_allowed: METRIC.sourceNotAllowed,
};

/**
 * What a 401's log line may say of the caller, after the keys were compared: always the same two fields, `appId` and
 * `keyId`, so a wrong key for a real app and any key for an unknown app write lines of one shape and cost the same
 * to log. The app id only when it names a real app, else null: an unknown one is whatever the caller sent (a key,
 * even). The key id only for a key that matched but was refused by a rule, so the saved query can tell which
 * partner still uses an expired key or calls from a new network.
 */
function refusedCaller(decision: Extract<AuthDecision, { ok: false }>, sentAppId: string): LogFields {
  switch (decision.reason) {
    case 'unknown_app':
      return { appId: null, keyId: null };
    case 'wrong_key':
      return { appId: sentAppId, keyId: null };
    case 'expired_key':
    case 'source_not_allowed':
      return { appId: decision.appId, keyId: decision.keyId };
  }
}

/**
 * The POST /payment handler: authentication first (one 401 for every cause), then the app's rate limit (429), then
 * the media type (415), then the body: its size (413, before any parsing), then its content (400). Only an authenticated request counts against an app's limit, so
 * nobody without the key can spend a partner's budget. The event is never logged whole (it carries App-key); each
 * request logs one line with its outcome and counts one outcome metric. Whatever the event holds, the answer is one
 * of those statuses, or 503 when keys (or, failing closed, the limiter) cannot be read.
 */
export function createHandler({
  keys,
  logger,
  metrics = NO_METRICS,
  now = Date.now,
  limits,
  keyFormat = DEFAULT_KEY_FORMAT_POLICY,
}: HandlerDependencies): PaymentHandler {
  return async (event) => {
    // Never throws, whatever the event holds.
    const request = readProxyRequest(event);
    const apiRequestId = request.requestId;
    const context: LogFields = { apiRequestId, sourceIp: request.sourceIp };
    try {
      const refuse = (
        name: keyof typeof REFUSAL_METRICS,
        fields: LogFields,
        headers: Readonly<Record<string, string>> = {},
      ): APIGatewayProxyResult => {
        const response = errorResponse(name, apiRequestId, headers);
        logger.info('request refused', { ...context, status: response.statusCode, ...fields });
        metrics.count(REFUSAL_METRICS[name]);
        return response;
      };

      /** The app's limit: a refusal (429, or 503 failing closed), or the headers of an accepted request. */
      const checkLimit = async (
        active: NonNullable<typeof limits>,
        limit: RateLimit,
        appId: string,
        caller: LogFields,
      ): Promise<
        { readonly refusal: APIGatewayProxyResult } | { readonly headers: Readonly<Record<string, string>> }
      > => {
        let outcome = await active.limiter.check(appId, limit);
        let reason = 'rate_limited';
        if (outcome.kind === 'unavailable') {
          metrics.count(METRIC.rateLimiterUnavailable);
          logger.warn('rate limiter unavailable', {
            ...context,
            appId,
            failure: active.failure,
            error: outcome.error,
          });
          if (active.failure === 'closed') {
            return { refusal: refuse('unavailable', { ...caller, reason: 'rate_limiter_unavailable' }) };
          }
          // Failing local, this environment's own count refuses past the app's limit. What it accepts goes on
          // without RateLimit fields, which would promise what only the shared count knows.
          if (active.failure === 'local' && outcome.local?.kind === 'limited') {
            outcome = outcome.local;
            reason = 'rate_limited_locally';
          }
        }
        if (outcome.kind === 'limited') {
          return {
            refusal: refuse(
              'tooManyRequests',
              { ...caller, reason, retryAfterSeconds: outcome.retryAfterSeconds },
              limitedHeaders(limit, outcome.retryAfterSeconds),
            ),
          };
        }
        return {
          headers:
            outcome.kind === 'accepted'
              ? rateLimitHeaders(limit, outcome.remaining, outcome.resetSeconds)
              : {},
        };
      };

      const credentials = readCredentials(request.headers.all('app-id'), request.headers.all('app-key'));
      if (!credentials.ok)
        return refuse('unauthorized', { reason: credentials.reason }, UNAUTHORIZED_HEADERS);
      // Before any lookup: a made-up key or App-id costs no cache read and no shard fetch. Neither is logged: the
      // App-id names no app we know of (it may be a key), and the key is a key.
      const screened = screenCredentials(credentials.credentials, keyFormat);
      if (screened !== undefined) {
        return refuse('unauthorized', { reason: screened, appId: null, keyId: null }, UNAUTHORIZED_HEADERS);
      }

      const { keyring, stale } = await keys.getKeys(credentials.credentials.appId);
      if (stale) metrics.count(METRIC.staleKeysServed);
      const keysUsed: LogFields = stale ? { staleKeys: true } : {};
      const decision = authenticate(credentials.credentials, keyring, {
        now: now(),
        sourceIp: request.sourceIp,
      });
      if (!decision.ok) {
        const known = refusedCaller(decision, credentials.credentials.appId);
        if (decision.reason === 'expired_key' || decision.reason === 'source_not_allowed') {
          metrics.count(KEY_RULE_METRICS[decision.reason]);
        }
        return refuse(
          'unauthorized',
          { ...keysUsed, reason: decision.reason, ...known },
          UNAUTHORIZED_HEADERS,
        );
      }

      const caller: LogFields = { ...keysUsed, appId: decision.appId, keyId: decision.keyId };
      const appLimit = keyring.get(decision.appId)?.rateLimit;
      if (limits === undefined && appLimit !== undefined) warnOfUnenforcedLimits(keyring, logger);
      const limited =
        limits === undefined
          ? { headers: {} }
          : await checkLimit(limits, appLimit ?? limits.defaultLimit, decision.appId, caller);
      if ('refusal' in limited) return limited.refusal;
      const limitHeaders = limited.headers;

      const mediaTypeProblem = contentTypeProblem(request.headers.all('content-type'));
      if (mediaTypeProblem !== undefined) {
        return refuse('unsupportedMediaType', { ...caller, reason: mediaTypeProblem }, limitHeaders);
      }
      // The size is judged before any parsing, so no body costs memory or time in proportion to its size.
      const body = readJsonBody(request.body);
      if (!body.ok) {
        const refusal = body.problem === 'body_too_large' ? 'payloadTooLarge' : 'badRequest';
        return refuse(refusal, { ...caller, reason: body.problem }, limitHeaders);
      }

      logger.info('request accepted', { ...context, ...caller, status: 200 });
      metrics.count(METRIC.accepted);
      return jsonResponse(200, JSON.stringify(SUCCESS_BODY), apiRequestId, limitHeaders);
    } catch (error) {
      if (error instanceof KeysUnavailableError) {
        logger.error('keys unavailable', { ...context, status: 503, error: describeError(error) });
        metrics.count(METRIC.unavailable);
        return errorResponse('unavailable', apiRequestId);
      }
      logger.error('unexpected error', { ...context, status: 500, error: describeError(error) });
      metrics.count(METRIC.internalError);
      return errorResponse('internalError', apiRequestId);
    }
  };
}
