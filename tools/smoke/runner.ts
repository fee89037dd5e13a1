import type { Check, CheckId, SmokeRequest } from './checks';
import type { Outcome } from './outcome';

/** Sends one request, giving up after `timeoutMs` at most. Never rejects: a failure is an outcome. */
export type SendRequest = (request: SmokeRequest, timeoutMs: number) => Promise<Outcome>;

/** The whole run, every request included: one slow server must not hold a deploy pipeline for minutes. */
export const RUN_TIME_LIMIT_MS = 60_000;

export interface RunOptions {
  /** Default RUN_TIME_LIMIT_MS. */
  readonly timeLimitMs?: number;
  /** Injectable for tests. Default Date.now. */
  readonly now?: () => number;
}

/** Why requests were left unsent. */
export type RunStop =
  /** The API cannot be reached at all: the first request that found so, and why. */
  | { readonly kind: 'unreachable'; readonly reason: string }
  | { readonly kind: 'time-limit'; readonly timeLimitMs: number };

export interface ChecksRun {
  readonly outcomes: ReadonlyMap<CheckId, Outcome>;
  readonly requestsSent: number;
  /** Requests that got an HTTP answer, whatever it was. */
  readonly answered: number;
  readonly stop?: RunStop;
}

function seconds(ms: number): string {
  return `${ms / 1000} s`;
}

/**
 * Sends the checks' requests one at a time, in order: a smoke test must not look like a burst to the stage's
 * throttling. Each request gets at most what is left of the run's time limit. Once the API proves unreachable,
 * or the time limit has passed, the rest are not sent.
 */
export async function runChecks(
  checks: readonly Check[],
  send: SendRequest,
  options: RunOptions = {},
): Promise<ChecksRun> {
  const timeLimitMs = options.timeLimitMs ?? RUN_TIME_LIMIT_MS;
  const now = options.now ?? Date.now;
  const deadline = now() + timeLimitMs;
  const outcomes = new Map<CheckId, Outcome>();
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
    const outcome = await send(check.request, remainingMs);
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
  return { outcomes, requestsSent, answered, ...(stop === undefined ? {} : { stop }) };
}
