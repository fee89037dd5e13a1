import type { Check, CheckId, SmokeRequest } from './checks';
import type { Outcome } from './outcome';
import { retryAfterSeconds, type RetryNote } from './retry';

/** Sends one request, giving up after `timeoutMs` at most. Never rejects: a failure is an outcome. */
export type SendRequest = (request: SmokeRequest, timeoutMs: number) => Promise<Outcome>;

/** The whole run, every request included: one slow server must not hold a deploy pipeline for minutes. */
export const RUN_TIME_LIMIT_MS = 60_000;

export interface RunOptions {
  /** Default RUN_TIME_LIMIT_MS. */
  readonly timeLimitMs?: number;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
  /** Waits before a retry; injectable for tests. Default a timer. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Why requests were left unsent. */
export type RunStop =
  /** The API cannot be reached at all: the first request that found so, and why. */
  | { readonly kind: 'unreachable'; readonly reason: string }
  | { readonly kind: 'time-limit'; readonly timeLimitMs: number };

export interface ChecksRun {
  readonly outcomes: ReadonlyMap<CheckId, Outcome>;
  /** The checks whose first answer was a 429 asking for a retry, and what became of it. */
  readonly retries: ReadonlyMap<CheckId, RetryNote>;
  /** Every request sent, retries included. */
  readonly requestsSent: number;
  /** Requests that got an HTTP answer, whatever it was. */
  readonly answered: number;
  readonly stop?: RunStop;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

function timer(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Sends the checks' requests one at a time, in order: a smoke test must not look like a burst to the stage's
 * throttling. Each request gets at most what is left of the run's time limit. A request the API answers with its
 * own 429 (the app over its rate limit, with Retry-After) is sent once more after waiting as asked, when the wait
 * leaves time for it. Once the API proves unreachable, or the time limit has passed, the rest are not sent.
 */
export async function runChecks(
  checks: readonly Check[],
  send: SendRequest,
  options: RunOptions = {},
): Promise<ChecksRun> {
  const timeLimitMs = options.timeLimitMs ?? RUN_TIME_LIMIT_MS;
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? timer;
  const deadline = now() + timeLimitMs;
  const outcomes = new Map<CheckId, Outcome>();
  const retries = new Map<CheckId, RetryNote>();
  let requestsSent = 0;
  let answered = 0;
  let stop: RunStop | undefined;
  const timeLimitReason = `the run's time limit of ${seconds(timeLimitMs)} passed`;

  for (const check of checks) {
    if (check.kind !== 'request') continue;
    const remainingMs = deadline - now();
    if (stop === undefined && remainingMs <= 0) stop = { kind: 'time-limit', timeLimitMs };
    if (stop !== undefined) {
      const reason = stop.kind === 'unreachable' ? `an earlier request got ${stop.reason}` : timeLimitReason;
      outcomes.set(check.id, { kind: 'not-run', reason: `not sent: ${reason}` });
      continue;
    }
    requestsSent++;
    let outcome = await send(check.request, remainingMs);
    const waitSeconds = retryAfterSeconds(outcome);
    if (waitSeconds !== undefined) {
      // Room to wait and then to send: the retry gets what is left after the wait.
      const retried = waitSeconds * 1000 < deadline - now();
      retries.set(check.id, { retryAfterSeconds: waitSeconds, retried });
      if (retried) {
        await sleep(waitSeconds * 1000);
        requestsSent++;
        outcome = await send(check.request, deadline - now());
      }
    }
    if (outcome.kind === 'no-answer' && now() >= deadline) {
      // Cut by the run's limit, not by the server's own silence: say so, and send nothing more.
      outcomes.set(check.id, {
        kind: 'no-answer',
        reason: `no answer before ${timeLimitReason}`,
        unreachable: false,
      });
      stop = { kind: 'time-limit', timeLimitMs };
      continue;
    }
    outcomes.set(check.id, outcome);
    if (outcome.kind === 'answer') answered++;
    if (outcome.kind === 'no-answer' && outcome.unreachable)
      stop = { kind: 'unreachable', reason: outcome.reason };
  }
  return { outcomes, retries, requestsSent, answered, ...(stop === undefined ? {} : { stop }) };
}
