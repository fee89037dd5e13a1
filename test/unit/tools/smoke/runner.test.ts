import { errorBody } from '../../../../shared/api/responses';
import { buildChecks, requestChecks, type SmokeRequest } from '../../../../tools/smoke/checks';
import type { Outcome } from '../../../../tools/smoke/outcome';
import { runChecks } from '../../../../tools/smoke/runner';

const checks = buildChecks({
  url: new URL('http://127.0.0.1:3000/payment'),
  appId: 'demo',
  appKey: 'test-smoke-key-0123456789abcdef',
  wrongKey: 'payk_wrong',
  unknownAppId: 'smoke-test-unknown-0',
});

const ANSWER: Outcome = { kind: 'answer', answer: { status: 200, headers: new Map(), body: '' } };

describe('runChecks', () => {
  it('sends each request once, one at a time, in order', async () => {
    // Arrange
    const sent: SmokeRequest[] = [];
    let inFlight = 0;
    let mostInFlight = 0;
    const send = async (request: SmokeRequest): Promise<Outcome> => {
      inFlight++;
      mostInFlight = Math.max(mostInFlight, inFlight);
      sent.push(request);
      await new Promise((resolve) => setImmediate(resolve));
      inFlight--;
      return ANSWER;
    };

    // Act
    const run = await runChecks(checks, send);

    // Assert
    expect(sent).toEqual(requestChecks(checks).map((check) => check.request));
    expect(run.requestsSent).toBe(11);
    expect(mostInFlight).toBe(1);
    expect([...run.outcomes.keys()]).toEqual(requestChecks(checks).map((check) => check.id));
  });

  it('stops sending once the API proves unreachable', async () => {
    // Arrange
    const send = (): Promise<Outcome> =>
      Promise.resolve({ kind: 'no-answer', reason: 'connection refused (ECONNREFUSED)', unreachable: true });

    // Act
    const run = await runChecks(checks, send);

    // Assert
    expect(run.requestsSent).toBe(1);
    expect(run.outcomes.get('wrong-key')).toEqual({
      kind: 'not-run',
      reason: 'not sent: an earlier request got connection refused (ECONNREFUSED)',
    });
  });

  it('goes on after a failure that concerns one request only, and counts the requests that got an answer', async () => {
    let sent = 0;
    const send = (): Promise<Outcome> =>
      Promise.resolve(
        ++sent % 2 === 0
          ? ANSWER
          : { kind: 'no-answer', reason: 'connection closed without an answer', unreachable: false },
      );

    const run = await runChecks(checks, send);

    expect([run.requestsSent, run.answered, run.stop]).toEqual([11, 5, undefined]);
  });
});

describe('runChecks within the time limit of the whole run', () => {
  /** A clock that only the fake server moves: each answer takes `answerMs`. */
  function slowServer(answerMs: number, outcome: (clock: number) => Outcome = () => ANSWER) {
    let clock = 1_000_000;
    const timeouts: number[] = [];
    return {
      now: () => clock,
      timeouts,
      send: (_request: SmokeRequest, timeoutMs: number): Promise<Outcome> => {
        timeouts.push(timeoutMs);
        clock += Math.min(answerMs, timeoutMs);
        return Promise.resolve(outcome(clock));
      },
    };
  }

  it('gives each request at most what is left of it, sends nothing more once it has passed, and says so in every row not sent', async () => {
    const server = slowServer(25_000);

    const run = await runChecks(checks, server.send, { now: server.now });

    expect(server.timeouts).toEqual([60_000, 35_000, 10_000]);
    expect(run.requestsSent).toBe(3);
    expect(run.stop).toEqual({ kind: 'time-limit', timeLimitMs: 60_000 });
    const notSent = requestChecks(checks)
      .slice(3)
      .map((check) => run.outcomes.get(check.id));
    expect(notSent).toEqual(
      Array.from({ length: 8 }, () => ({
        kind: 'not-run',
        reason: "not sent: the run's time limit of 60 s passed",
      })),
    );
  });

  it('reports a request the limit cut short as such, not as a server that does not answer', async () => {
    const server = slowServer(40_000, (clock) =>
      clock >= 1_060_000 ? { kind: 'no-answer', reason: 'no answer within 20 s', unreachable: true } : ANSWER,
    );

    const run = await runChecks(checks, server.send, { now: server.now });

    expect(run.outcomes.get('wrong-key')).toEqual({
      kind: 'no-answer',
      reason: "no answer before the run's time limit of 60 s passed",
      unreachable: false,
    });
    expect(run.stop).toEqual({ kind: 'time-limit', timeLimitMs: 60_000 });
    expect([run.requestsSent, run.answered]).toEqual([2, 1]);
  });

  it('takes another limit when given one', async () => {
    const server = slowServer(1_000);

    const run = await runChecks(checks, server.send, { now: server.now, timeLimitMs: 2_500 });

    expect(server.timeouts).toEqual([2_500, 1_500, 500]);
    expect(run.stop).toEqual({ kind: 'time-limit', timeLimitMs: 2_500 });
    expect(run.outcomes.get('missing-app-key')).toEqual({
      kind: 'not-run',
      reason: "not sent: the run's time limit of 2.5 s passed",
    });
  });
});

describe('runChecks after a 429 that asks for a retry', () => {
  const THROTTLED: Outcome = {
    kind: 'answer',
    answer: {
      status: 429,
      headers: new Map([['retry-after', ['2']]]),
      body: errorBody('tooManyRequests'),
    },
  };
  const accepted = requestChecks(checks)[0];

  /** A server whose answers are scripted per request, on a clock that only sending and sleeping move. */
  function scriptedServer(answers: readonly Outcome[], answerMs = 100) {
    let clock = 1_000_000;
    const sent: { request: SmokeRequest; timeoutMs: number; at: number }[] = [];
    const sleeps: number[] = [];
    return {
      sent,
      sleeps,
      now: () => clock,
      sleep: (ms: number): Promise<void> => {
        sleeps.push(ms);
        clock += ms;
        return Promise.resolve();
      },
      send: (request: SmokeRequest, timeoutMs: number): Promise<Outcome> => {
        sent.push({ request, timeoutMs, at: clock });
        clock += answerMs;
        return Promise.resolve(answers[sent.length - 1] ?? ANSWER);
      },
    };
  }

  it.each([
    ['its answer is the outcome', ANSWER],
    ['once more only: a second 429 is the outcome', THROTTLED],
  ])('waits Retry-After and sends the same request once more, counting both: %s', async (_label, retried) => {
    const server = scriptedServer([THROTTLED, retried]);

    const run = await runChecks(checks, server.send, server);

    expect(server.sleeps).toEqual([2_000]);
    expect(server.sent.slice(0, 2).map((entry) => entry.request)).toEqual([
      accepted?.request,
      accepted?.request,
    ]);
    expect(run.outcomes.get('accepted')).toEqual(retried);
    expect(run.retries).toEqual(new Map([['accepted', { retryAfterSeconds: 2, retried: true }]]));
    expect(run.requestsSent).toBe(12);
  });

  it('gives the retry what is left of the time limit after the wait', async () => {
    const server = scriptedServer([THROTTLED]);

    await runChecks(checks, server.send, { ...server, timeLimitMs: 10_000 });

    expect(server.sent.slice(0, 2).map((entry) => entry.timeoutMs)).toEqual([10_000, 7_900]);
  });

  it('does not wait past the time limit: the 429 stays the outcome, and the row will say why', async () => {
    const server = scriptedServer([THROTTLED]);

    const run = await runChecks(checks, server.send, { ...server, timeLimitMs: 2_000 });

    expect(server.sleeps).toEqual([]);
    expect(run.outcomes.get('accepted')).toEqual(THROTTLED);
    expect(run.retries.get('accepted')).toEqual({ retryAfterSeconds: 2, retried: false });
  });
});
