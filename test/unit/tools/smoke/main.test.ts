/** The smoke test run in-process: usage, and what it says when the API cannot be reached or takes too long. */
import { generateKey } from '../../../../shared/keys/key-material';
import { USAGE } from '../../../../tools/smoke/args';
import { freeLoopbackPort } from '../../../support/loopback';
import type { LimitDecision, RateLimiter } from '../../../../lambda/payment/rate-limit/limiter';
import { startContractServer, type ContractServer } from '../../../support/contract-server';
import { parseReport, runSmokeInProcess } from '../../../support/run-smoke';
import { startStallingServer } from '../../../support/stalling-server';

const APP_KEY = generateKey();
/** 48 letters and digits, as the stack has Secrets Manager generate the demo app's key. */
const STACK_SHAPED_KEY = 'Q7tZk2WmX9aB4cD8eF1gH3jK5lM6nP0rS2uV4wY7zA9bC1dE';

let api: ContractServer;
beforeAll(async () => {
  api = await startContractServer({ demo: [APP_KEY] });
});
afterAll(async () => {
  await api.close();
});

describe('runSmoke', () => {
  it('prints the usage for --help and exits 0', async () => {
    expect(await runSmokeInProcess(['--help'], {})).toEqual({ code: 0, stdout: USAGE, stderr: '' });
  });

  it.each<[string, (url: string) => readonly string[], Readonly<Record<string, string>>]>([
    ['a key on the command line', (url) => ['--url', url, '--app-id', 'demo', `--app-key=${APP_KEY}`], {}],
    [
      "a key shaped like the stack's demo key as the app id",
      (url) => ['--url', url, '--app-id', STACK_SHAPED_KEY],
      { APP_KEY },
    ],
  ])('exits 2 for %s, with one line on stderr and nothing sent', async (_label, argv, env) => {
    // Act
    const run = await runSmokeInProcess(argv(api.paymentUrl), env);

    // Assert
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(run.stderr).not.toContain(APP_KEY.slice(5, 21));
    expect(run.stderr).not.toContain(STACK_SHAPED_KEY.slice(0, 16));
    expect(api.received).toHaveLength(0);
  });
});

describe('runSmoke against an API it cannot reach', () => {
  it('says so in one line and exits 1 when nothing listens, with no table', async () => {
    // Arrange
    const url = `http://127.0.0.1:${await freeLoopbackPort()}/payment`;

    // Act
    const runs = [
      await runSmokeInProcess(['--url', url, '--app-id', 'demo'], { APP_KEY }),
      await runSmokeInProcess(['--url', url, '--app-id', 'demo', '--json'], { APP_KEY }),
    ];

    // Assert
    for (const run of runs) {
      expect(run).toEqual({
        code: 1,
        stdout: '',
        stderr: `error: cannot reach ${url}: connection refused (ECONNREFUSED)\n`,
      });
    }
  });
});

describe('runSmoke past its time limit', () => {
  it('reports the checks left as not run, says why in one line and exits 1', async () => {
    // Arrange: a server that never answers, and requests that alone would wait a minute for it
    const server = await startStallingServer('silent');
    try {
      const url = `${server.endpoint}/payment`;

      // Act
      const run = await runSmokeInProcess(
        ['--url', url, '--app-id', 'demo', '--json'],
        { APP_KEY },
        {
          sendOptions: { timeoutMs: 60_000 },
          run: { timeLimitMs: 300 },
        },
      );

      // Assert
      expect(run.code).toBe(1);
      expect(run.stderr).toBe(
        "error: the run's time limit of 0.3 s passed; 10 of 11 requests were not sent (the report says which)\n",
      );
      const report = parseReport(run.stdout);
      expect(report.requestsSent).toBe(1);
      expect(report.checks[0]).toMatchObject({
        got: 'no answer',
        problems: ["no answer before the run's time limit of 0.3 s passed"],
      });
      expect(report.checks[1]).toMatchObject({
        got: 'not run',
        problems: ["not sent: the run's time limit of 0.3 s passed"],
      });
      expect(report.passed).toBe(false);
    } finally {
      await server.close();
    }
  });
});

describe('runSmoke against an API that limits the app', () => {
  /** Refuses the `refused`-th authenticated request (1 is the first), once; accepts every other. */
  function refusingOnce(refused: number, retryAfterSeconds: number): RateLimiter {
    let calls = 0;
    return {
      check: (): Promise<LimitDecision> =>
        Promise.resolve(
          ++calls === refused
            ? { kind: 'limited', retryAfterSeconds }
            : { kind: 'accepted', remaining: 9, resetSeconds: 1 },
        ),
    };
  }

  async function smokeAgainstLimiter(limiter: RateLimiter) {
    const server = await startContractServer({ demo: [APP_KEY] }, undefined, {
      limits: { limiter, defaultLimit: { perSecond: 10, burst: 10 }, failure: 'open' },
    });
    const waits: number[] = [];
    try {
      const run = await runSmokeInProcess(
        ['--url', server.paymentUrl, '--app-id', 'demo', '--json'],
        { APP_KEY },
        {
          run: {
            sleep: (ms) => {
              waits.push(ms);
              return Promise.resolve();
            },
          },
        },
      );
      return { run, report: parseReport(run.stdout), waits, received: server.received.length };
    } finally {
      await server.close();
    }
  }

  it('honours Retry-After on a 429, sends the request once more, passes, and says so in the row', async () => {
    // Act: the server answers the first request with the key 429, Retry-After: 1
    const { run, report, waits, received } = await smokeAgainstLimiter(refusingOnce(1, 1));

    // Assert
    expect(run.code).toBe(0);
    expect(waits).toEqual([1_000]);
    expect(received).toBe(12);
    expect(report.requestsSent).toBe(12);
    expect(report.checks[0]).toMatchObject({
      id: 'accepted',
      got: '200 ok (sent again after a 429 with Retry-After: 1)',
      retry: { retryAfterSeconds: 1, retried: true },
      passed: true,
    });
    expect(report.checks.filter((check) => check.retry !== undefined).map((check) => check.id)).toEqual([
      'accepted',
    ]);
  });

  it('retries whichever request met the limit: here the one with the wrong media type', async () => {
    const { run, report } = await smokeAgainstLimiter(refusingOnce(2, 3));

    expect(run.code).toBe(0);
    expect(report.checks.find((check) => check.id === 'wrong-media-type')).toMatchObject({
      got: '415 unsupported_media_type (sent again after a 429 with Retry-After: 3)',
      passed: true,
    });
  });
});
