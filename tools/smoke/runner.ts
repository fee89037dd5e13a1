import type { Check, CheckId, SmokeRequest } from './checks';
import type { Outcome } from './outcome';

export type SendRequest = (request: SmokeRequest) => Promise<Outcome>;

export interface ChecksRun {
  readonly outcomes: ReadonlyMap<CheckId, Outcome>;
  readonly requestsSent: number;
}

/**
 * Sends the checks' requests one at a time, in order: a smoke test must not look like a burst to the stage's
 * throttling. Once the API proves unreachable, the rest are not sent.
 */
export async function runChecks(checks: readonly Check[], send: SendRequest): Promise<ChecksRun> {
  const outcomes = new Map<CheckId, Outcome>();
  let requestsSent = 0;
  let stopReason: string | undefined;
  for (const check of checks) {
    if (check.kind !== 'request') continue;
    if (stopReason !== undefined) {
      outcomes.set(check.id, { kind: 'not-run', reason: `not sent: an earlier request got ${stopReason}` });
      continue;
    }
    requestsSent++;
    const outcome = await send(check.request);
    outcomes.set(check.id, outcome);
    if (outcome.kind === 'no-answer' && outcome.unreachable) stopReason = outcome.reason;
  }
  return { outcomes, requestsSent };
}
