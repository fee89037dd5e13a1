import { ERROR_RESPONSES } from '../../shared/api/responses';
import type { Outcome } from './outcome';

/** What became of a 429 that asked for a retry. */
export interface RetryNote {
  /** The answer's Retry-After. */
  readonly retryAfterSeconds: number;
  /** Sent again after waiting that long; false when the wait would have passed the run's time limit. */
  readonly retried: boolean;
}

const TOO_MANY_REQUESTS = ERROR_RESPONSES.tooManyRequests;

/** RFC 9110's delay-seconds: digits only. The API sends nothing else (an HTTP-date is not retried). */
const DELAY_SECONDS = /^\d{1,9}$/;

/**
 * The seconds to wait before sending the request again, when the answer is the API's own 429: status 429, a body
 * whose code is too_many_requests, and one Retry-After in seconds (an app over its rate limit). Undefined for
 * anything else, a 429 without Retry-After included (the stage throttle's, which says nothing of when). Pure.
 */
export function retryAfterSeconds(outcome: Outcome): number | undefined {
  if (outcome.kind !== 'answer') return undefined;
  const { status, headers, body } = outcome.answer;
  if (status !== TOO_MANY_REQUESTS.statusCode) return undefined;
  const values = headers.get('retry-after') ?? [];
  const value = values.length === 1 ? values[0]?.trim() : undefined;
  if (value === undefined || !DELAY_SECONDS.test(value)) return undefined;
  let code: unknown;
  try {
    code = (JSON.parse(body) as { code?: unknown } | null)?.code;
  } catch {
    return undefined;
  }
  return code === TOO_MANY_REQUESTS.code ? Number(value) : undefined;
}
