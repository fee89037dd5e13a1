import { errorCode } from '../errors';
import type { AwsJsonService, AwsTarget, CredentialProvider } from './aws-environment';
import { createNodeHttpTransport, type TransportAnswer, type HttpTransport } from './http-transport';
import { abortedAttempt, AttemptError } from './attempt-errors';
import { setAbortSignal } from './set-abort-signal';
import { signRequest } from './sigv4';

/**
 * A small client for AWS's JSON protocols (Secrets Manager's 1.1, DynamoDB's 1.0): one operation is one signed POST
 * with `X-Amz-Target`, within its caller's time budget (one AbortSignal per call, CallOptions.signal), with the
 * SDK's names for what goes wrong, so the key cache's and the limiter's logs and metrics read the same. It is what the payment Lambda
 * needs from the AWS SDK (two calls), without the SDK's client machinery: see docs/development.md.
 */

/**
 * An answer of the service that is an error: `name` is its AWS error type (`ThrottlingException`,
 * `AccessDeniedException`, `ResourceNotFoundException`, `DecryptionFailure`, `InternalServiceError`, ...), as the
 * SDK names its exceptions; `$fault` says whose fault, as the SDK's: `client` for a 4xx (the request was refused,
 * nothing was done), `server` for a 5xx.
 */
export class AwsServiceError extends Error {
  override readonly name: string;
  readonly $fault: 'client' | 'server';
  readonly statusCode: number;

  constructor(name: string, message: string, statusCode: number) {
    super(message);
    this.name = name;
    this.statusCode = statusCode;
    this.$fault = statusCode >= 500 ? 'server' : 'client';
  }
}

/** A 2xx answer that is not a JSON object: the call's outcome is unknown. */
export class MalformedAnswerError extends Error {
  override readonly name = 'MalformedAnswerError';
}

/** The SDK's throttling and transient error types (@smithy/service-error-classification): worth one more attempt. */
const RETRYABLE_TYPES = new Set([
  'BandwidthLimitExceeded',
  'EC2ThrottledException',
  'LimitExceededException',
  'PriorRequestNotComplete',
  'ProvisionedThroughputExceededException',
  'RequestLimitExceeded',
  'RequestThrottled',
  'RequestThrottledException',
  'SlowDown',
  'ThrottledException',
  'Throttling',
  'ThrottlingException',
  'TooManyRequestsException',
  'TransactionInProgressException',
  'RequestTimeout',
  'RequestTimeoutException',
]);
const RETRYABLE_STATUS = new Set([429, 500, 502, 503, 504]);
/** Node's codes for a connection that failed, the SDK's list. */
const RETRYABLE_NETWORK_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

function isRetryable(error: unknown): boolean {
  if (error instanceof AwsServiceError) {
    return RETRYABLE_TYPES.has(error.name) || RETRYABLE_STATUS.has(error.statusCode);
  }
  // A timer of the attempt (the caller's budget ended the call before this is asked).
  if (error instanceof AttemptError) return true;
  return RETRYABLE_NETWORK_CODES.has(errorCode(error) ?? '');
}

/**
 * The error type of an AWS JSON error answer, as the SDK reads it: the `x-amzn-errortype` header, else the body's
 * `code`, else its `__type`; without anything after a `:` (a URL) or before a `#` (a namespace, as DynamoDB writes
 * `com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException`).
 */
export function errorOfAnswer(answer: TransportAnswer): AwsServiceError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(answer.body);
    if (typeof parsed === 'object' && parsed !== null) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page): the status alone speaks.
  }
  const text = (value: unknown): string | undefined =>
    typeof value === 'string' && value !== '' ? value : undefined;
  const rawType = text(answer.headers['x-amzn-errortype']) ?? text(body.code) ?? text(body.__type);
  const type = rawType?.split(',')[0]?.split(':')[0]?.split('#').pop()?.trim();
  const message =
    text(body.message) ??
    text(body.Message) ??
    text(body.errorMessage) ??
    `HTTP ${answer.status} without a message`;
  return new AwsServiceError(type || `UnknownError${answer.status}`, message, answer.status);
}

/**
 * How the small client makes the attempts of one call. The time the whole call may take is not here: it is the
 * caller's budget, the signal of each call (CallOptions.signal).
 */
export interface AttemptBounds {
  /** Attempts per call of a read, the first included (a write gets one: CallOptions.idempotent). */
  readonly maxAttempts: number;
  /** One attempt's TCP (and TLS) connect: past it the request was never sent. */
  readonly connectionTimeoutMs: number;
  /**
   * The longest silence of a connection once made (before the answer, and within it): past it a read is tried
   * again while the budget lasts. Absent: none; the caller's budget alone bounds the attempt.
   */
  readonly socketTimeoutMs?: number;
  /**
   * A fixed pause before each retry, throttling answers included, where the caller has its own spacing of calls
   * (the key cache) and cannot afford the SDK's back-off. Absent: the SDK's standard back-off, exponential with
   * full jitter from 100 ms.
   */
  readonly retryDelayMs?: number;
}

export interface AwsJsonClientOptions {
  readonly service: AwsJsonService;
  /** Where the calls go; resolved once, on the first call (the local server's region may need a profile read). */
  readonly target: AwsTarget | (() => Promise<AwsTarget>);
  readonly credentials: CredentialProvider;
  readonly bounds: AttemptBounds;
  /** Injectable for tests and the benchmark. Default: node:http/https with keep-alive. */
  readonly transport?: HttpTransport;
  /** The clock requests are signed with. Default Date.now. */
  readonly now?: () => number;
  /** Sent, unsigned, as User-Agent. */
  readonly userAgent?: string;
}

export interface CallOptions {
  /**
   * Whether the operation may be sent again after an attempt that may have reached the service (a read): then up to
   * AttemptBounds.maxAttempts. A conditional write is not: it gets one attempt, whatever the bounds.
   */
  readonly idempotent: boolean;
  /**
   * The caller's budget: AbortSignal.timeout(ms) made once by the caller for the whole call (every attempt and
   * pause between them), or a signal it aborts itself. The call ends as soon as it aborts.
   */
  readonly signal: AbortSignal;
}

/** Settles as `work` does, or rejects when `signal` aborts first: for what comes before anything is sent. */
function beforeSending<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    work.then(resolve, reject).finally(setAbortSignal(signal, () => false, reject));
  });
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** Read through a call: the signal may be aborted at any await, which narrowing cannot see. */
const isAborted = (signal: AbortSignal): boolean => signal.aborted;

/** The back-off before attempt `attempt` + 1: the bounds' fixed delay, else the SDK's full jitter from 100 ms. */
function backOffMs(bounds: AttemptBounds, attempt: number): number {
  return bounds.retryDelayMs ?? Math.random() * Math.min(20_000, 100 * 2 ** (attempt - 1));
}

/** One AWS JSON service; one instance per service and execution environment (its connections stay open). */
export class AwsJsonClient {
  private readonly service: AwsJsonService;
  private readonly target: () => Promise<AwsTarget>;
  private readonly credentials: CredentialProvider;
  private readonly bounds: AttemptBounds;
  private readonly transport: HttpTransport;
  private readonly now: () => number;
  private readonly userAgent: string;

  constructor(options: AwsJsonClientOptions) {
    this.service = options.service;
    const { target } = options;
    let resolved: Promise<AwsTarget> | undefined;
    this.target =
      typeof target === 'function'
        ? () => {
            // A failed resolution is tried again by the next call.
            resolved ??= target().catch((error: unknown) => {
              resolved = undefined;
              throw error;
            });
            return resolved;
          }
        : () => Promise.resolve(target);
    this.credentials = options.credentials;
    this.bounds = options.bounds;
    this.transport = options.transport ?? createNodeHttpTransport();
    this.now = options.now ?? Date.now;
    this.userAgent = options.userAgent ?? 'payment-api';
  }

  /**
   * Calls `operation` with `input` (the service's JSON shape) and gives the answer's JSON object, within the
   * caller's budget (`options.signal`).
   */
  async call(operation: string, input: object, options: CallOptions): Promise<Record<string, unknown>> {
    const { signal } = options;
    const maxAttempts = options.idempotent ? Math.max(1, this.bounds.maxAttempts) : 1;
    const target = await beforeSending(this.target(), signal);
    const body = JSON.stringify(input);
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.attempt(target, operation, body, attempt > 1, signal);
      } catch (error) {
        if (signal.aborted || attempt >= maxAttempts || !isRetryable(error)) throw error;
      }
      await sleep(backOffMs(this.bounds, attempt), signal);
      // The budget may have run out during the pause: an earlier attempt was sent.
      if (isAborted(signal)) throw abortedAttempt(signal.reason, true);
    }
  }

  private async attempt(
    target: AwsTarget,
    operation: string,
    body: string,
    freshConnection: boolean,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const credentials = await beforeSending(this.credentials(), signal);
    const headers = await signRequest(
      {
        method: 'POST',
        host: target.url.host,
        path: target.url.pathname,
        headers: {
          Host: target.url.host,
          'Content-Type': this.service.contentType,
          'Content-Length': String(Buffer.byteLength(body)),
          'X-Amz-Target': `${this.service.targetPrefix}.${operation}`,
        },
        body,
      },
      credentials,
      { region: target.region, service: this.service.signingName },
      new Date(this.now()),
    );
    const answer = await this.transport({
      url: target.url,
      headers: { ...headers, 'User-Agent': this.userAgent },
      body,
      connectionTimeoutMs: this.bounds.connectionTimeoutMs,
      ...(this.bounds.socketTimeoutMs === undefined ? {} : { socketTimeoutMs: this.bounds.socketTimeoutMs }),
      freshConnection,
      signal,
    });
    if (answer.status < 200 || answer.status >= 300) throw errorOfAnswer(answer);
    if (answer.body.trim() === '') return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(answer.body);
    } catch {
      throw new MalformedAnswerError(`${this.service.name} answered ${operation} with text that is not JSON`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new MalformedAnswerError(
        `${this.service.name} answered ${operation} with JSON that is not an object`,
      );
    }
    return parsed as Record<string, unknown>;
  }
}
