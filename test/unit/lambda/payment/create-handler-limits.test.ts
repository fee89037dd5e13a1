import type { APIGatewayProxyResult } from 'aws-lambda';
import { createHandler, type RequestLimits } from '../../../../lambda/payment/create-handler';
import type { KeyringProvider } from '../../../../lambda/payment/key-cache';
import { METRIC, type CountedMetricName } from '../../../../lambda/payment/metric-names';
import type { LimitDecision, RateLimiter } from '../../../../lambda/payment/rate-limit/limiter';
import { createMemoryRateLimiter } from '../../../../lambda/payment/rate-limit/memory-limiter';
import { SharedRateLimiter } from '../../../../lambda/payment/rate-limit/shared-limiter';
import { windowOffsetMs } from '../../../../lambda/payment/rate-limit/window';
import { errorBody } from '../../../../shared/api/responses';
import { parseKeyring } from '../../../../shared/keys/keyring';
import type { RateLimit } from '../../../../shared/keys/rate-limit';
import { captureLogs } from '../../../support/capture-logger';
import { CounterStoreDouble } from '../../../support/counter-store-double';
import { paymentEvent } from '../../../support/events';
import { DEMO_KEY, PARTNER_KEY } from '../../../support/keys';

const NOW = 1_800_000_000_000;
const JSON_TYPE: [string, string] = ['Content-Type', 'application/json'];
const demo = (key = DEMO_KEY, contentType = 'application/json'): Array<[string, string]> => [
  ['Content-Type', contentType],
  ['App-id', 'demo'],
  ['App-key', key],
];
const partner: Array<[string, string]> = [JSON_TYPE, ['App-id', 'partner'], ['App-key', PARTNER_KEY]];

/** demo follows the stack's default; partner has a limit of its own, tighter. One keyring, as between refreshes. */
const { keyring } = parseKeyring(
  JSON.stringify({ demo: DEMO_KEY, partner: { keys: [PARTNER_KEY], rateLimit: { perSecond: 1 } } }),
);
const keys: KeyringProvider = { getKeys: () => Promise.resolve({ keyring, stale: false }) };

const DEFAULT_LIMIT: RateLimit = { perSecond: 2, burst: 2 };

/** A limiter that records what it was asked and answers as told. */
function scriptedLimiter(answer: LimitDecision): RateLimiter & { readonly asked: [string, RateLimit][] } {
  const asked: [string, RateLimit][] = [];
  return {
    asked,
    check: (appId, limit) => {
      asked.push([appId, limit]);
      return Promise.resolve(answer);
    },
  };
}

function handlerWith(limits?: Partial<RequestLimits>) {
  const logs = captureLogs();
  const counted: CountedMetricName[] = [];
  const handle = createHandler({
    keys,
    logger: logs.logger,
    now: () => NOW,
    metrics: { count: (name) => counted.push(name) },
    ...(limits === undefined
      ? {}
      : {
          limits: {
            limiter: createMemoryRateLimiter(() => NOW),
            defaultLimit: DEFAULT_LIMIT,
            failure: 'open',
            ...limits,
          },
        }),
  });
  return { handle, logs, counted };
}

async function times(
  count: number,
  send: () => Promise<APIGatewayProxyResult>,
): Promise<APIGatewayProxyResult[]> {
  const results: APIGatewayProxyResult[] = [];
  for (let i = 0; i < count; i++) results.push(await send());
  return results;
}

describe('POST /payment with per-app rate limits', () => {
  it("tells an accepted request what is left of its quota, and answers 429 too_many_requests once the app's burst is spent, with Retry-After and the RateLimit fields; an app's own limit rather than the stack's default", async () => {
    const { handle } = handlerWith({});

    const results = await times(3, () => handle(paymentEvent(demo())));
    const ownLimit = await times(2, () => handle(paymentEvent(partner)));

    expect(results.map((result) => result.statusCode)).toEqual([200, 200, 429]);
    expect(results[0]?.headers).toMatchObject({
      'RateLimit-Policy': '"app";q=2;w=1',
      RateLimit: '"app";r=1;t=1',
    });
    const limited = results[2];
    expect(limited?.body).toBe(errorBody('tooManyRequests'));
    expect(limited?.headers).toMatchObject({
      'Content-Type': 'application/json',
      'Cache-Control': 'no-store',
      'Retry-After': '1',
      'RateLimit-Policy': '"app";q=2;w=1',
      RateLimit: '"app";r=0;t=1',
    });
    expect(ownLimit.map((result) => result.statusCode)).toEqual([200, 429]);
    expect(ownLimit[0]?.headers).toMatchObject({ 'RateLimit-Policy': '"app";q=1;w=1' });
  });

  it('counts only authenticated requests: a wrong key is 401 and spends nothing of the app', async () => {
    const limiter = scriptedLimiter({ kind: 'limited', retryAfterSeconds: 5 });
    const { handle } = handlerWith({ limiter });

    const wrong = await handle(paymentEvent(demo(PARTNER_KEY)));

    expect(wrong.statusCode).toBe(401);
    expect(limiter.asked).toEqual([]);
  });

  it('checks the limit before the media type and the body: 429 wins over 415 and 400', async () => {
    const { handle } = handlerWith({ limiter: scriptedLimiter({ kind: 'limited', retryAfterSeconds: 2 }) });

    const wrongType = await handle(paymentEvent(demo(DEMO_KEY, 'text/plain')));
    const badBody = await handle(paymentEvent(demo(), { body: '{not json' }));

    expect([wrongType.statusCode, badBody.statusCode]).toEqual([429, 429]);
  });

  it('gives 415 and 400 the RateLimit fields of the request they spent', async () => {
    const { handle } = handlerWith({});

    const wrongType = await handle(paymentEvent(demo(DEMO_KEY, 'text/plain')));

    expect(wrongType.statusCode).toBe(415);
    expect(wrongType.headers).toMatchObject({ RateLimit: '"app";r=1;t=1' });
  });

  it('logs a 429 with the app, the key id and the wait, and counts it as Throttled', async () => {
    const { handle, logs, counted } = handlerWith({
      limiter: scriptedLimiter({ kind: 'limited', retryAfterSeconds: 7 }),
    });

    await handle(paymentEvent(demo()));

    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        message: 'request refused',
        status: 429,
        reason: 'rate_limited',
        appId: 'demo',
        keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
        retryAfterSeconds: 7,
      }),
    );
    expect(counted).toEqual([METRIC.throttled]);
    expect(logs.lines.join('\n')).not.toContain(DEMO_KEY);
  });

  it.each<[string, LimitDecision, 'open' | 'local']>([
    ['failure is open', { kind: 'unavailable', error: 'TimeoutError: no decision within 150 ms' }, 'open'],
    [
      'failing local, its own count accepts',
      {
        kind: 'unavailable',
        error: 'TimeoutError: no decision within 150 ms',
        local: { kind: 'accepted', remaining: 3, resetSeconds: 1 },
      },
      'local',
    ],
  ])(
    'lets the request through when the limiter cannot answer and %s, without RateLimit fields, counting it as unavailable',
    async (_label, decision, failure) => {
      const { handle, logs, counted } = handlerWith({ limiter: scriptedLimiter(decision), failure });

      const result = await handle(paymentEvent(demo()));

      expect(result.statusCode).toBe(200);
      expect(result.headers).not.toHaveProperty('RateLimit');
      expect(counted).toEqual([METRIC.rateLimiterUnavailable, METRIC.accepted]);
      expect(logs.entries()).toContainEqual(
        expect.objectContaining({
          level: 'warn',
          message: 'rate limiter unavailable',
          appId: 'demo',
          failure,
          error: 'TimeoutError: no decision within 150 ms',
        }),
      );
    },
  );

  it("failing local, refuses past this environment's own count with 429, Retry-After and reason rate_limited_locally, counting it as unavailable", async () => {
    const { handle, logs, counted } = handlerWith({
      limiter: scriptedLimiter({
        kind: 'unavailable',
        error: 'TimeoutError: time budget ran out after sending',
        local: { kind: 'limited', retryAfterSeconds: 1 },
      }),
      failure: 'local',
    });

    const result = await handle(paymentEvent(demo()));

    expect(result.statusCode).toBe(429);
    expect(result.body).toBe(errorBody('tooManyRequests'));
    expect(result.headers).toMatchObject({ 'Retry-After': '1' });
    expect(counted).toEqual([METRIC.rateLimiterUnavailable, METRIC.throttled]);
    expect(logs.entries()).toContainEqual(
      expect.objectContaining({
        status: 429,
        reason: 'rate_limited_locally',
        appId: 'demo',
        retryAfterSeconds: 1,
      }),
    );
  });

  it('answers 503 unavailable when the limiter cannot answer and failure is closed', async () => {
    const { handle, counted } = handlerWith({
      limiter: scriptedLimiter({ kind: 'unavailable', error: 'ThrottlingException: slow down' }),
      failure: 'closed',
    });

    const result = await handle(paymentEvent(demo()));

    expect(result.statusCode).toBe(503);
    expect(result.body).toBe(errorBody('unavailable'));
    expect(counted).toEqual([METRIC.rateLimiterUnavailable, METRIC.unavailable]);
  });

  it('without limits, serves every app and warns once per keyring that the secret asks for limits it cannot apply', async () => {
    const { handle, logs } = handlerWith();

    const results = await times(3, () => handle(paymentEvent(partner)));

    expect(results.map((result) => result.statusCode)).toEqual([200, 200, 200]);
    expect(results[0]?.headers).not.toHaveProperty('RateLimit');
    const warnings = logs.entries().filter((entry) => entry.level === 'warn');
    expect(warnings).toEqual([
      expect.objectContaining({
        message: 'rate limits in the secret are not enforced: the stack has no appRateLimit (no limiter)',
        apps: 1,
      }),
    ]);
  });
});

describe('a changed limit, in three execution environments sharing the count', () => {
  /** 100 ms into one of partner's 1-second windows: every step below falls in it. */
  const MID_WINDOW = 1_800_000_000 * 1_000 + windowOffsetMs('partner', 1_000) + 100;
  const secretWith = (rateLimit: RateLimit): ReturnType<typeof parseKeyring>['keyring'] =>
    parseKeyring(JSON.stringify({ partner: { keys: [PARTNER_KEY], rateLimit } })).keyring;

  /** Three environments, each with the keys it last read and its own limiter, all counting in one store. */
  function environments(
    keyring: ReturnType<typeof secretWith>,
    defaultLimit: RateLimit = DEFAULT_LIMIT,
    store = new CounterStoreDouble({ now: () => MID_WINDOW }),
    count = 3,
  ) {
    const current = { keyring };
    const handlers = Array.from({ length: count }, () =>
      createHandler({
        keys: { getKeys: () => Promise.resolve({ keyring: current.keyring, stale: false }) },
        logger: captureLogs().logger,
        now: () => MID_WINDOW,
        limits: {
          limiter: new SharedRateLimiter({ store, now: () => MID_WINDOW }),
          defaultLimit,
          failure: 'open',
        },
      }),
    );
    /** One request from each environment, `rounds` times: the statuses in order. */
    const send = async (rounds: number): Promise<number[]> => {
      const statuses = [];
      for (let round = 0; round < rounds; round++) {
        for (const handle of handlers) statuses.push((await handle(paymentEvent(partner))).statusCode);
      }
      return statuses;
    };
    return { current, send, store };
  }

  it('raised or lowered in the secret, applies at the next key refresh, mid-window, in every environment', async () => {
    const { current, send } = environments(secretWith({ perSecond: 2, burst: 2 }));

    const atTwo = await send(2);
    current.keyring = secretWith({ perSecond: 4, burst: 4 });
    const raised = await send(1);
    current.keyring = secretWith({ perSecond: 1, burst: 1 });
    const lowered = await send(1);

    // Every environment has seen the window full at 2; at 4 each asks again, and the window admits 2 more.
    expect(atTwo).toEqual([200, 200, 429, 429, 429, 429]);
    expect(raised).toEqual([200, 200, 429]);
    // Lowered below what the window holds: refused at once, everywhere.
    expect(lowered).toEqual([429, 429, 429]);
  });

  it("raised by the stack's appRateLimit (a deploy), counts on from what the window holds", async () => {
    const noLimitOfItsOwn = parseKeyring(JSON.stringify({ partner: [PARTNER_KEY] })).keyring;
    const before = environments(noLimitOfItsOwn, { perSecond: 2, burst: 2 });
    await before.send(1);
    const after = environments(noLimitOfItsOwn, { perSecond: 3, burst: 3 }, before.store, 1);

    expect(await after.send(2)).toEqual([200, 429]);
  });
});
