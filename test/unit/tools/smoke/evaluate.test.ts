import { errorBody, SUCCESS_BODY } from '../../../../shared/api/responses';
import { buildChecks, type CheckId, type Expectation } from '../../../../tools/smoke/checks';
import {
  evaluateAnswer,
  evaluateChecks,
  OWN_KEY_REFUSED_HINT,
  printable,
  STAGE_THROTTLED_HINT,
  STILL_RATE_LIMITED_HINT,
} from '../../../../tools/smoke/evaluate';
import type { SmokeAnswer, Outcome } from '../../../../tools/smoke/outcome';
import { createSecretMask } from '../../../../tools/smoke/secret-mask';

const NO_SECRETS = createSecretMask([]);

function answer(
  status: number,
  headers: Readonly<Record<string, string | string[]>>,
  body: string,
): SmokeAnswer {
  return {
    status,
    headers: new Map(
      Object.entries(headers).map(([name, value]) => [
        name.toLowerCase(),
        Array.isArray(value) ? value : [value],
      ]),
    ),
    body,
  };
}

const JSON_NO_STORE = { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' };
const UNAUTHORIZED_BODY = errorBody('unauthorized');
const CHALLENGE = { 'WWW-Authenticate': 'App-key realm="payment-api"' };

const OK: Expectation = { status: 200, code: 'ok' };
const REFUSED: Expectation = { status: 401, code: 'unauthorized', present: ['WWW-Authenticate'] };
const NOT_ALLOWED: Expectation = { status: 405, code: 'method_not_allowed', headers: { Allow: 'POST' } };

describe('evaluateAnswer', () => {
  it('passes a conforming answer and says what it got', () => {
    expect(evaluateAnswer(OK, answer(200, JSON_NO_STORE, JSON.stringify(SUCCESS_BODY)), NO_SECRETS)).toEqual({
      got: '200 ok',
      problems: [],
    });
    expect(
      evaluateAnswer(
        NOT_ALLOWED,
        answer(405, { ...JSON_NO_STORE, Allow: 'POST' }, errorBody('methodNotAllowed')),
        NO_SECRETS,
      ),
    ).toEqual({ got: '405 method_not_allowed, Allow: POST', problems: [] });
    expect(
      evaluateAnswer(REFUSED, answer(401, { ...JSON_NO_STORE, ...CHALLENGE }, UNAUTHORIZED_BODY), NO_SECRETS),
    ).toEqual({
      got: '401 unauthorized, WWW-Authenticate',
      problems: [],
    });
  });

  it('accepts media type parameters and other Cache-Control directives beside no-store', () => {
    const headers = {
      'Content-Type': 'Application/JSON; charset=utf-8',
      'Cache-Control': 'private, no-store',
    };

    expect(
      evaluateAnswer(OK, answer(200, headers, JSON.stringify(SUCCESS_BODY)), NO_SECRETS).problems,
    ).toEqual([]);
  });

  it.each<[string, Expectation, SmokeAnswer, string, string[]]>([
    [
      'another status and code',
      OK,
      answer(401, { ...JSON_NO_STORE, ...CHALLENGE }, UNAUTHORIZED_BODY),
      '401 unauthorized',
      ['status 401, expected 200', 'code "unauthorized", expected "ok"'],
    ],
    [
      'a body that is not JSON',
      { status: 404, code: 'not_found' },
      answer(404, { 'Content-Type': 'text/html', 'Cache-Control': 'no-store' }, '<h1>Not Found</h1>'),
      '404 (body not JSON)',
      ['body is not JSON', 'Content-Type "text/html", not application/json'],
    ],
    [
      'JSON of another shape',
      OK,
      answer(200, JSON_NO_STORE, '{"status":"ok"}'),
      '200 (body not {code, message})',
      ['body is not {"code", "message"}'],
    ],
    [
      'an empty message',
      OK,
      answer(200, JSON_NO_STORE, '{"code":"ok","message":" "}'),
      '200 ok',
      ['empty message'],
    ],
    [
      'no Cache-Control',
      OK,
      answer(200, { 'Content-Type': 'application/json' }, JSON.stringify(SUCCESS_BODY)),
      '200 ok',
      ['no Cache-Control header'],
    ],
    [
      'a cacheable answer',
      OK,
      answer(200, { ...JSON_NO_STORE, 'Cache-Control': 'max-age=60' }, JSON.stringify(SUCCESS_BODY)),
      '200 ok',
      ['Cache-Control "max-age=60", not no-store'],
    ],
    [
      'Content-Type twice',
      OK,
      answer(
        200,
        { ...JSON_NO_STORE, 'Content-Type': ['application/json', 'text/plain'] },
        JSON.stringify(SUCCESS_BODY),
      ),
      '200 ok',
      ['Content-Type sent 2 times'],
    ],
    [
      'no Allow on 405',
      NOT_ALLOWED,
      answer(405, JSON_NO_STORE, errorBody('methodNotAllowed')),
      '405 method_not_allowed',
      ['no Allow header'],
    ],
    [
      'Allow naming more than POST',
      NOT_ALLOWED,
      answer(405, { ...JSON_NO_STORE, Allow: 'GET, POST' }, errorBody('methodNotAllowed')),
      '405 method_not_allowed, Allow: GET, POST',
      ['Allow "GET, POST", expected "POST"'],
    ],
    [
      'no WWW-Authenticate on 401',
      REFUSED,
      answer(401, JSON_NO_STORE, UNAUTHORIZED_BODY),
      '401 unauthorized',
      ['no WWW-Authenticate header'],
    ],
  ])('names %s', (_label, expect_, received, got, problems) => {
    expect(evaluateAnswer(expect_, received, NO_SECRETS)).toEqual({ got, problems });
  });

  it('prints what a server sent only as short printable text', () => {
    expect(printable(`a\u0000b\u001b[31m${'x'.repeat(100)}`, NO_SECRETS)).toBe(`a?b?[31m${'x'.repeat(52)}…`);
  });
});

describe('evaluateChecks', () => {
  const checks = buildChecks({
    url: new URL('http://127.0.0.1:3000/payment'),
    appId: 'demo',
    appKey: 'test-smoke-key-0123456789abcdef',
    wrongKey: 'payk_wrong',
    unknownAppId: 'smoke-test-unknown-0',
  });
  const refusalIds: CheckId[] = [
    'wrong-key',
    'unknown-app',
    'missing-app-key',
    'missing-app-id',
    'duplicate-app-key',
  ];
  const refusal = (body = UNAUTHORIZED_BODY, challenge = CHALLENGE): Outcome => ({
    kind: 'answer',
    answer: answer(401, { ...JSON_NO_STORE, ...challenge }, body),
  });
  const uniformRow = (outcomes: ReadonlyMap<CheckId, Outcome>) =>
    evaluateChecks(checks, outcomes, NO_SECRETS).find((result) => result.id === 'same-401');

  it("says what a 401 to the app's own key can mean: wrong, expired, or outside its allowed networks", () => {
    const outcomes = new Map<CheckId, Outcome>([['accepted', refusal()]]);

    const row = evaluateChecks(checks, outcomes, NO_SECRETS).find((result) => result.id === 'accepted');

    expect(row?.passed).toBe(false);
    expect(row?.problems).toEqual([
      'status 401, expected 200',
      'code "unauthorized", expected "ok"',
      OWN_KEY_REFUSED_HINT,
    ]);
    expect(OWN_KEY_REFUSED_HINT).toContain('expired');
    expect(OWN_KEY_REFUSED_HINT).toContain('allowedCidrs');
  });

  it('passes the comparison when every 401 is the same', () => {
    const outcomes = new Map(refusalIds.map((id) => [id, refusal()] as const));

    expect(uniformRow(outcomes)).toEqual({
      id: 'same-401',
      title: 'every 401 identical',
      expected: 'one body, one WWW-Authenticate',
      got: '5 identical',
      passed: true,
      problems: [],
    });
  });

  it.each<[string, CheckId, Outcome, { got: string }, string]>([
    [
      '401 bodies differ',
      'unknown-app',
      refusal('{"code":"unauthorized","message":"Unknown App-id."}'),
      { got: '2 bodies, 1 WWW-Authenticate' },
      'bodies differ: wrong App-key, no App-key header, no App-id header, App-key sent twice | unknown App-id',
    ],
    [
      'WWW-Authenticate differs',
      'missing-app-key',
      refusal(UNAUTHORIZED_BODY, { 'WWW-Authenticate': 'Basic' }),
      { got: '1 body, 2 WWW-Authenticate' },
      'WWW-Authenticate differs: wrong App-key, unknown App-id, no App-id header, App-key sent twice | no App-key header',
    ],
  ])('names the checks whose %s', (_label, id, odd, row, problem) => {
    const outcomes = new Map(refusalIds.map((refused) => [refused, refusal()] as const));
    outcomes.set(id, odd);

    expect(uniformRow(outcomes)).toMatchObject({ ...row, passed: false, problems: [problem] });
  });

  it('compares only the answers that were 401, and needs two of them', () => {
    const outcomes = new Map<CheckId, Outcome>([['wrong-key', refusal()]]);
    outcomes.set('unknown-app', {
      kind: 'answer',
      answer: answer(200, JSON_NO_STORE, JSON.stringify(SUCCESS_BODY)),
    });

    expect(uniformRow(outcomes)).toMatchObject({
      got: '1 answered 401',
      passed: false,
      problems: ['fewer than two 401 answers to compare'],
    });
  });

  it('fails a check that got no answer or was not sent, saying why', () => {
    const results = evaluateChecks(
      checks,
      new Map<CheckId, Outcome>([
        ['accepted', { kind: 'no-answer', reason: 'connection refused (ECONNREFUSED)', unreachable: true }],
        [
          'wrong-key',
          { kind: 'not-run', reason: 'not sent: an earlier request got connection refused (ECONNREFUSED)' },
        ],
      ]),
      NO_SECRETS,
    );

    expect(results[0]).toEqual({
      id: 'accepted',
      title: 'POST with the key',
      expected: '200 ok',
      got: 'no answer',
      passed: false,
      problems: ['connection refused (ECONNREFUSED)'],
    });
    expect(results[1]).toMatchObject({
      got: 'not run',
      passed: false,
      problems: ['not sent: an earlier request got connection refused (ECONNREFUSED)'],
    });
    expect(results.map((result) => result.id)).toEqual(checks.map((check) => check.id));
  });

  describe('a request the API answered 429', () => {
    const throttled = (retryAfter?: string): Outcome => ({
      kind: 'answer',
      answer: answer(
        429,
        { ...JSON_NO_STORE, ...(retryAfter === undefined ? {} : { 'Retry-After': retryAfter }) },
        errorBody('tooManyRequests'),
      ),
    });
    const accepted: Outcome = {
      kind: 'answer',
      answer: answer(200, JSON_NO_STORE, JSON.stringify(SUCCESS_BODY)),
    };
    const acceptedRow = (outcome: Outcome, retry?: { retryAfterSeconds: number; retried: boolean }) =>
      evaluateChecks(
        checks,
        new Map<CheckId, Outcome>([['accepted', outcome]]),
        NO_SECRETS,
        new Map(retry === undefined ? [] : [['accepted', retry] as const]),
      )[0];

    it('passes on the answer to the retry, and says in the row that it was sent again', () => {
      expect(acceptedRow(accepted, { retryAfterSeconds: 1, retried: true })).toEqual({
        id: 'accepted',
        title: 'POST with the key',
        expected: '200 ok',
        got: '200 ok (sent again after a 429 with Retry-After: 1)',
        status: 200,
        retry: { retryAfterSeconds: 1, retried: true },
        passed: true,
        problems: [],
      });
    });

    it('fails a retry that got 429 again, saying the app is still over its limit', () => {
      const row = acceptedRow(throttled('1'), { retryAfterSeconds: 1, retried: true });

      expect(row).toMatchObject({
        got: '429 too_many_requests (sent again after a 429 with Retry-After: 1)',
        passed: false,
        problems: [
          'status 429, expected 200',
          'code "too_many_requests", expected "ok"',
          STILL_RATE_LIMITED_HINT,
        ],
      });
    });

    it('fails a 429 whose Retry-After would pass the time limit, saying it was not sent again', () => {
      const row = acceptedRow(throttled('900'), { retryAfterSeconds: 900, retried: false });

      expect(row?.got).toBe('429 too_many_requests (Retry-After: 900)');
      expect(row?.problems.at(-1)).toBe(
        "the app is over its rate limit, and waiting Retry-After (900 s) would pass the run's time limit: not sent again",
      );
    });

    it("fails the stage throttle's 429 (no Retry-After), naming it", () => {
      expect(acceptedRow(throttled())?.problems).toEqual([
        'status 429, expected 200',
        'code "too_many_requests", expected "ok"',
        STAGE_THROTTLED_HINT,
      ]);
    });
  });
});
