import { COMMON_HEADERS } from '../../shared/api/responses';
import type { Check, CheckId, Expectation, RequestCheck, UniformityCheck } from './checks';
import type { SmokeAnswer, Outcome } from './outcome';
import type { RetryNote } from './retry';
import type { SecretMask } from './secret-mask';

/** One row of the report. */
export interface CheckResult {
  readonly id: CheckId;
  readonly title: string;
  /** What the contract asks for: `405 method_not_allowed, Allow: POST`. */
  readonly expected: string;
  /** What came back, in the same terms: `401 unauthorized`, `200 (body not JSON)`, `no answer: …`. */
  readonly got: string;
  /** The HTTP status received, when there was an answer (to the retry, when the request was sent again). */
  readonly status?: number;
  /** The first answer was a 429 with Retry-After: whether the request was sent again after waiting that long. */
  readonly retry?: RetryNote;
  readonly passed: boolean;
  /** Why it failed, one phrase each; empty when it passed. */
  readonly problems: readonly string[];
}

/** Every answer, whatever the check, must be JSON and uncacheable: answers depend on credentials. */
const JSON_MEDIA_TYPE = COMMON_HEADERS['Content-Type'];
const NO_STORE = COMMON_HEADERS['Cache-Control'];
const WWW_AUTHENTICATE = 'www-authenticate';

const MAX_QUOTED_LENGTH = 60;

/**
 * Server-sent text as it may appear in a report: the known secrets masked, then printable ASCII, then short.
 * In that order: shortened first, a key echoed past the cut would be left mostly standing, and unmasked.
 */
export function printable(value: string, mask: SecretMask): string {
  const visible = mask(value).replace(/[^\x20-\x7e]/g, '?');
  return visible.length > MAX_QUOTED_LENGTH ? `${visible.slice(0, MAX_QUOTED_LENGTH)}…` : visible;
}

function quoteReceived(value: string, mask: SecretMask): string {
  return `"${printable(value, mask)}"`;
}

export function describeExpectation(expect: Expectation): string {
  const parts = [`${expect.status} ${expect.code}`];
  for (const [name, value] of Object.entries(expect.headers ?? {})) parts.push(`${name}: ${value}`);
  parts.push(...(expect.present ?? []));
  return parts.join(', ');
}

type BodyReading =
  | { readonly kind: 'error-shape'; readonly code: string; readonly message: string }
  | { readonly kind: 'not-json' }
  | { readonly kind: 'other-json' };

function readBody(body: string): BodyReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return { kind: 'not-json' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return { kind: 'other-json' };
  const { code, message } = parsed as { code?: unknown; message?: unknown };
  if (typeof code !== 'string' || typeof message !== 'string') return { kind: 'other-json' };
  return { kind: 'error-shape', code, message };
}

function single(answer: SmokeAnswer, name: string): { value?: string; problem?: string } {
  const values = answer.headers.get(name.toLowerCase()) ?? [];
  if (values.length === 0) return { problem: `no ${name} header` };
  if (values.length > 1) return { problem: `${name} sent ${values.length} times` };
  return { value: (values[0] ?? '').trim() };
}

function contentTypeProblem(answer: SmokeAnswer, mask: SecretMask): string | undefined {
  const { value, problem } = single(answer, 'Content-Type');
  if (value === undefined) return problem;
  const mediaType = value.split(';', 1)[0]?.trim().toLowerCase();
  return mediaType === JSON_MEDIA_TYPE
    ? undefined
    : `Content-Type ${quoteReceived(value, mask)}, not ${JSON_MEDIA_TYPE}`;
}

function cacheControlProblem(answer: SmokeAnswer, mask: SecretMask): string | undefined {
  const { value, problem } = single(answer, 'Cache-Control');
  if (value === undefined) return problem;
  const directives = value.split(',').map((directive) => directive.trim().toLowerCase());
  return directives.includes(NO_STORE)
    ? undefined
    : `Cache-Control ${quoteReceived(value, mask)}, not ${NO_STORE}`;
}

function headerProblems(answer: SmokeAnswer, expect: Expectation, mask: SecretMask): string[] {
  const problems: string[] = [];
  for (const [name, wanted] of Object.entries(expect.headers ?? {})) {
    const { value, problem } = single(answer, name);
    if (value === undefined) problems.push(problem ?? `no ${name} header`);
    else if (value !== wanted) problems.push(`${name} ${quoteReceived(value, mask)}, expected "${wanted}"`);
  }
  for (const name of expect.present ?? []) {
    const { value, problem } = single(answer, name);
    if (value === undefined || value === '') problems.push(problem ?? `empty ${name} header`);
  }
  return problems;
}

/** The headers the check looks for, as received, in the terms of describeExpectation. */
function receivedHeaders(answer: SmokeAnswer, expect: Expectation, mask: SecretMask): string[] {
  const received: string[] = [];
  for (const name of Object.keys(expect.headers ?? {})) {
    const { value } = single(answer, name);
    if (value !== undefined) received.push(`${name}: ${printable(value, mask)}`);
  }
  for (const name of expect.present ?? []) {
    if (single(answer, name).value) received.push(name);
  }
  return received;
}

/**
 * Pure: the answer against the check's expectation and against what every answer must be. What the server sent
 * is quoted through `mask`, so a server that echoes the key does not print it.
 */
export function evaluateAnswer(
  expect: Expectation,
  answer: SmokeAnswer,
  mask: SecretMask,
): { got: string; problems: string[] } {
  const problems: string[] = [];
  if (answer.status !== expect.status) problems.push(`status ${answer.status}, expected ${expect.status}`);

  const body = readBody(answer.body);
  let got: string;
  if (body.kind === 'error-shape') {
    got = `${answer.status} ${printable(body.code, mask)}`;
    if (body.code !== expect.code)
      problems.push(`code ${quoteReceived(body.code, mask)}, expected "${expect.code}"`);
    if (body.message.trim() === '') problems.push('empty message');
  } else {
    got = `${answer.status} (${body.kind === 'not-json' ? 'body not JSON' : 'body not {code, message}'})`;
    problems.push(body.kind === 'not-json' ? 'body is not JSON' : 'body is not {"code", "message"}');
  }

  for (const problem of [contentTypeProblem(answer, mask), cacheControlProblem(answer, mask)]) {
    if (problem !== undefined) problems.push(problem);
  }
  problems.push(...headerProblems(answer, expect, mask));
  return { got: [got, ...receivedHeaders(answer, expect, mask)].join(', '), problems };
}

/** What the GOT cell adds about a 429 that asked for a retry. */
function retryRemark(retry: RetryNote): string {
  return retry.retried
    ? ` (sent again after a 429 with Retry-After: ${retry.retryAfterSeconds})`
    : ` (Retry-After: ${retry.retryAfterSeconds})`;
}

/** Why the final answer was a 429, in the terms an operator acts on; undefined for any other answer. */
function throttledHint(answer: SmokeAnswer, retry: RetryNote | undefined): string | undefined {
  if (answer.status !== TOO_MANY_REQUESTS_STATUS) return undefined;
  if (retry === undefined) return answer.headers.has('retry-after') ? undefined : STAGE_THROTTLED_HINT;
  return retry.retried
    ? STILL_RATE_LIMITED_HINT
    : `the app is over its rate limit, and waiting Retry-After (${retry.retryAfterSeconds} s) would pass the run's time limit: not sent again`;
}

function evaluateRequestCheck(
  check: RequestCheck,
  outcome: Outcome | undefined,
  mask: SecretMask,
  retry: RetryNote | undefined,
): CheckResult {
  const base = {
    id: check.id,
    title: check.title,
    expected: describeExpectation(check.expect),
    ...(retry === undefined ? {} : { retry }),
  };
  if (outcome === undefined || outcome.kind === 'not-run') {
    const reason = outcome?.reason ?? 'not sent';
    return { ...base, got: 'not run', passed: false, problems: [reason] };
  }
  const remark = retry === undefined ? '' : retryRemark(retry);
  if (outcome.kind === 'no-answer') {
    return { ...base, got: `no answer${remark}`, passed: false, problems: [mask(outcome.reason)] };
  }
  const { got, problems } = evaluateAnswer(check.expect, outcome.answer, mask);
  if (check.id === 'accepted' && outcome.answer.status === UNAUTHORIZED_STATUS)
    problems.push(OWN_KEY_REFUSED_HINT);
  const throttled =
    check.expect.status === TOO_MANY_REQUESTS_STATUS ? undefined : throttledHint(outcome.answer, retry);
  if (throttled !== undefined) problems.push(throttled);
  return {
    ...base,
    got: `${got}${remark}`,
    status: outcome.answer.status,
    passed: problems.length === 0,
    problems,
  };
}

const UNAUTHORIZED_STATUS = 401;
const TOO_MANY_REQUESTS_STATUS = 429;

/** A 429 without Retry-After is API Gateway's: the stage's rate, shared by every app, is used up. */
export const STAGE_THROTTLED_HINT =
  "a 429 without Retry-After: the stage's throttle refused it (the API as a whole is at its rate limit)";

/** A 429 after honouring Retry-After once: the app's budget is being spent as fast as it refills. */
export const STILL_RATE_LIMITED_HINT =
  "still over the app's rate limit after waiting Retry-After once: other clients of the app are using its " +
  'budget, or its rate limit leaves no room for these requests (the payment Lambda logs reason rate_limited)';

/**
 * A 401 to the app's own key has three causes the answer never tells apart; the API's logs do. Said once, on the
 * row where an operator looks first.
 */
export const OWN_KEY_REFUSED_HINT =
  "the key is wrong, has expired, or this machine's address is outside the app's allowedCidrs " +
  '(the payment Lambda logs which: reason wrong_key, expired_key or source_not_allowed)';

/** Groups the checks' titles by a value of their answers; one group means "identical". */
function groupBy(entries: readonly { title: string; value: string }[]): string[][] {
  const groups = new Map<string, string[]>();
  for (const { title, value } of entries) {
    const titles = groups.get(value);
    if (titles) titles.push(title);
    else groups.set(value, [title]);
  }
  return [...groups.values()];
}

function evaluateUniformity(
  check: UniformityCheck,
  checks: readonly Check[],
  outcomes: ReadonlyMap<CheckId, Outcome>,
): CheckResult {
  const base = { id: check.id, title: check.title, expected: 'one body, one WWW-Authenticate' };
  const refusals = check.of.flatMap((id) => {
    const outcome = outcomes.get(id);
    const title = checks.find((candidate) => candidate.id === id)?.title ?? id;
    return outcome?.kind === 'answer' && outcome.answer.status === 401
      ? [{ title, answer: outcome.answer }]
      : [];
  });
  if (refusals.length < 2) {
    return {
      ...base,
      got: `${refusals.length} answered 401`,
      passed: false,
      problems: ['fewer than two 401 answers to compare'],
    };
  }

  const problems: string[] = [];
  const bodies = groupBy(refusals.map(({ title, answer }) => ({ title, value: answer.body })));
  if (bodies.length > 1)
    problems.push(`bodies differ: ${bodies.map((titles) => titles.join(', ')).join(' | ')}`);
  const challenges = groupBy(
    refusals.map(({ title, answer }) => ({
      title,
      value: (answer.headers.get(WWW_AUTHENTICATE) ?? []).join('\n'),
    })),
  );
  if (challenges.length > 1) {
    problems.push(`WWW-Authenticate differs: ${challenges.map((titles) => titles.join(', ')).join(' | ')}`);
  }
  const got =
    problems.length === 0
      ? `${refusals.length} identical`
      : `${bodies.length} ${bodies.length === 1 ? 'body' : 'bodies'}, ${challenges.length} WWW-Authenticate`;
  return { ...base, got, passed: problems.length === 0, problems };
}

/**
 * Pure: one result per check, in the checks' order; whatever the server sent is quoted through `mask`. A check in
 * `retries` is judged by its last answer, and its row says it was sent again.
 */
export function evaluateChecks(
  checks: readonly Check[],
  outcomes: ReadonlyMap<CheckId, Outcome>,
  mask: SecretMask,
  retries: ReadonlyMap<CheckId, RetryNote> = new Map(),
): CheckResult[] {
  return checks.map((check) =>
    check.kind === 'request'
      ? evaluateRequestCheck(check, outcomes.get(check.id), mask, retries.get(check.id))
      : evaluateUniformity(check, checks, outcomes),
  );
}
