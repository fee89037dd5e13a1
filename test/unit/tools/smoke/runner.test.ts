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

  it('goes on after a failure that concerns one request only', async () => {
    const send = (): Promise<Outcome> =>
      Promise.resolve({
        kind: 'no-answer',
        reason: 'connection closed without an answer',
        unreachable: false,
      });

    expect((await runChecks(checks, send)).requestsSent).toBe(11);
  });
});
