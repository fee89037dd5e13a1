import { errorBody, SUCCESS_BODY } from '../../../../shared/api/responses';
import type { Outcome } from '../../../../tools/smoke/outcome';
import { retryAfterSeconds } from '../../../../tools/smoke/retry';

function answered(
  status: number,
  headers: Readonly<Record<string, readonly string[]>>,
  body: string,
): Outcome {
  return { kind: 'answer', answer: { status, headers: new Map(Object.entries(headers)), body } };
}

const TOO_MANY = errorBody('tooManyRequests');

describe('retryAfterSeconds', () => {
  it("asks for a retry after the API's own 429: too_many_requests with Retry-After in seconds", () => {
    expect(retryAfterSeconds(answered(429, { 'retry-after': ['3'] }, TOO_MANY))).toBe(3);
    expect(retryAfterSeconds(answered(429, { 'retry-after': [' 0 '] }, TOO_MANY))).toBe(0);
  });

  it.each<[string, Outcome]>([
    ["the stage throttle's 429, which has no Retry-After", answered(429, {}, TOO_MANY)],
    [
      'a Retry-After as an HTTP date',
      answered(429, { 'retry-after': ['Wed, 21 Oct 2026 07:28:00 GMT'] }, TOO_MANY),
    ],
    ['a negative Retry-After', answered(429, { 'retry-after': ['-1'] }, TOO_MANY)],
    ['Retry-After sent twice', answered(429, { 'retry-after': ['1', '2'] }, TOO_MANY)],
    ['another code in the body', answered(429, { 'retry-after': ['1'] }, errorBody('unavailable'))],
    ['a body that is not JSON', answered(429, { 'retry-after': ['1'] }, 'slow down')],
    ['a body that is JSON null', answered(429, { 'retry-after': ['1'] }, 'null')],
    ['a 503 with Retry-After', answered(503, { 'retry-after': ['1'] }, errorBody('unavailable'))],
    ['a 200', answered(200, { 'retry-after': ['1'] }, JSON.stringify(SUCCESS_BODY))],
    ['no answer', { kind: 'no-answer', reason: 'connection closed without an answer', unreachable: false }],
  ])('asks for none after %s', (_label, outcome) => {
    expect(retryAfterSeconds(outcome)).toBeUndefined();
  });
});
