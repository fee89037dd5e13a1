/**
 * Per-app rate limits on the local server as a user runs it (`npm start` with APP_RATE_LIMIT): counted in memory by
 * one server, or in a DynamoDB table (here moto's) shared by several; and what a request gets when that table
 * cannot be reached, failing open or closed.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorBody, SUCCESS_BODY } from '../../../shared/api/responses';
import { wholeSeconds } from '../../../lambda/payment/rate-limit/limiter';
import { appWindowAt } from '../../../lambda/payment/rate-limit/window';
import { generateKey } from '../../../shared/keys/key-material';
import {
  credentials,
  killAllLocalServers,
  send,
  SETUP_TIMEOUT_MS,
  startLocalServer,
  startLocalServerWithKeys,
  stopLocalServer,
  type KeyFileServer,
  type LocalServerProcess,
  type Reply,
} from '../../support/local-server-process';
import { withinOneWindow, type AppLimit } from '../../support/limit-windows';
import {
  createMotoRateLimitTable,
  EMULATOR_LIMITER_DEADLINE_MS,
  freeLoopbackPort,
  MOTO_AWS_ENV,
  motoDynamoDb,
  startMoto,
  type MotoServer,
} from '../../support/moto';

afterAll(() => {
  killAllLocalServers();
});

const KEYS = { demo: generateKey(), generous: generateKey(), strict: generateKey(), spare: generateKey() };

/** One request per 1,000 s: in windows of 1,000 s, offset per app. */
const STRICT_LIMIT = { perSecond: 0.001, burst: 1 };

/**
 * `demo` has the server's default limit; `generous` a higher one of its own; `strict` one request per 1,000 s, so
 * its second request is refused however slowly the machine runs (unless a window ends between them: withinOneWindow).
 */
const SECRET = {
  demo: [KEYS.demo],
  generous: { keys: [KEYS.generous], rateLimit: { perSecond: 1000, burst: 10 } },
  strict: { keys: [KEYS.strict], rateLimit: { perSecond: STRICT_LIMIT.perSecond } },
  spare: { keys: [KEYS.spare], rateLimit: { perSecond: STRICT_LIMIT.perSecond } },
};

/** strict, or spare (same limit, not used before) when a window of strict ended during the first attempt. */
const strictApp = (attempt: 0 | 1): 'strict' | 'spare' => (attempt === 0 ? 'strict' : 'spare');
const strictWindows = (attempt: 0 | 1): readonly AppLimit[] => [[strictApp(attempt), STRICT_LIMIT]];

function header(reply: Reply, name: string): string | undefined {
  const value = reply.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(', ') : value;
}

function post(server: LocalServerProcess, appId: keyof typeof KEYS): Promise<Reply> {
  return send(server.baseUrl, { headers: credentials(appId, KEYS[appId]) });
}

function statuses(replies: readonly Reply[]): number[] {
  return replies.map((reply) => reply.status).sort((a, b) => a - b);
}

/** The JSON log lines of the server so far. */
function logLines(server: LocalServerProcess): Record<string, unknown>[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** What `read` returns once it returns something, read again every 20 ms for up to 15 s; else undefined. */
async function eventually<T>(read: () => T | undefined): Promise<T | undefined> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = read();
    if (value !== undefined || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('npm start with APP_RATE_LIMIT=2 (counted in this process)', () => {
  let local: KeyFileServer;
  let server: LocalServerProcess;

  beforeAll(async () => {
    local = await startLocalServerWithKeys(SECRET, { APP_RATE_LIMIT: '2' });
    ({ server } = local);
  }, SETUP_TIMEOUT_MS);

  afterAll(() => local.stop());

  it('says in its banner which limit applies, and where it is counted', () => {
    expect(server.output()).toContain(
      'rate limits: 2/s, burst 2 for every app without a rateLimit of its own, counted in this process',
    );
  });

  it('refuses the requests past the burst with 429, Retry-After and the RateLimit fields', async () => {
    // Act: six at once; at 2/s with a burst of 2, two are accepted in each 1-second window they fall in.
    const startedAt = Date.now();
    const replies = await Promise.all(Array.from({ length: 6 }, () => post(server, 'demo')));
    const windows = Math.floor(Date.now() / 1000) - Math.floor(startedAt / 1000) + 1;

    // Assert
    const accepted = replies.filter((reply) => reply.status === 200);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(accepted.length + refused.length).toBe(6);
    expect(accepted.length).toBeGreaterThanOrEqual(2);
    expect(accepted.length).toBeLessThanOrEqual(2 * windows);
    expect(refused.length).toBeGreaterThan(0);
    for (const reply of refused) {
      expect(reply.body).toBe(errorBody('tooManyRequests'));
      const retryAfter = header(reply, 'Retry-After') ?? '';
      expect(retryAfter).toMatch(/^[1-9]\d*$/);
      expect(header(reply, 'RateLimit-Policy')).toBe('"app";q=2;w=1');
      expect(header(reply, 'RateLimit')).toBe(`"app";r=0;t=${retryAfter}`);
    }
    for (const reply of accepted) {
      expect(reply.body).toBe(JSON.stringify(SUCCESS_BODY));
      expect(header(reply, 'RateLimit-Policy')).toBe('"app";q=2;w=1');
      expect(header(reply, 'RateLimit')).toMatch(/^"app";r=[01];t=[1-9]\d*$/);
    }
  });

  it("applies an app's own higher rateLimit from the key file instead of the default", async () => {
    // Act
    const replies = await Promise.all(Array.from({ length: 6 }, () => post(server, 'generous')));

    // Assert
    expect(statuses(replies)).toEqual([200, 200, 200, 200, 200, 200]);
    // 1,000 a second in bursts of 10: windows of 10 ms, which no whole-second policy says exactly; 10 a second is
    // what a client can count on (1,000 at once would be refused after 10).
    for (const reply of replies) expect(header(reply, 'RateLimit-Policy')).toBe('"app";q=10;w=1');
  });

  it("applies an app's own lower rateLimit: one request per 1,000 s, then 429 until then", async () => {
    // Act
    const {
      result: [first, second, appId],
      before,
      after,
    } = await withinOneWindow(strictWindows, async (attempt) => {
      const appId = strictApp(attempt);
      return [await post(server, appId), await post(server, appId), appId] as const;
    });

    // Assert
    expect(first.status).toBe(200);
    expect(header(first, 'RateLimit-Policy')).toBe('"app";q=1;w=1000');
    expect(second.status).toBe(429);
    // Until the end of the app's window the requests fell in (its own edge: windows are offset per app).
    const { endMs } = appWindowAt(appId, STRICT_LIMIT, before);
    expect(Number(header(second, 'Retry-After'))).toBeGreaterThanOrEqual(wholeSeconds(endMs - after));
    expect(Number(header(second, 'Retry-After'))).toBeLessThanOrEqual(wholeSeconds(endMs - before));
  });

  it('checks the limit after the credentials and before the media type and the body', async () => {
    // Arrange and act: strict has spent its one request (above, or now)
    const {
      result: [wrongKey, wrongMediaType, notJson],
    } = await withinOneWindow(strictWindows, async (attempt) => {
      const appId = strictApp(attempt);
      await post(server, appId);
      return [
        await send(server.baseUrl, { headers: credentials(appId, generateKey()) }),
        await send(server.baseUrl, {
          headers: ['Content-Type', 'text/plain', 'App-id', appId, 'App-key', KEYS[appId]],
          body: 'hi',
        }),
        await send(server.baseUrl, { headers: credentials(appId, KEYS[appId]), body: '{' }),
      ] as const;
    });

    // Assert
    expect([wrongKey.status, wrongMediaType.status, notJson.status]).toEqual([401, 429, 429]);
    expect(header(wrongKey, 'RateLimit')).toBeUndefined();
  });

  it('logs each 429 with the app, the key and when to retry, never the key itself', async () => {
    // Act
    await post(server, 'strict');
    const refusal = await eventually(() =>
      logLines(server).find((line) => line.status === 429 && line.appId === 'strict'),
    );

    // Assert
    expect(refusal).toMatchObject({
      message: 'request refused',
      status: 429,
      reason: 'rate_limited',
      appId: 'strict',
      keyId: expect.stringMatching(/^[0-9a-f]{12}$/) as unknown,
      retryAfterSeconds: expect.any(Number) as unknown,
    });
    for (const key of Object.values(KEYS)) expect(server.output()).not.toContain(key);
  });
});

describe('npm start without APP_RATE_LIMIT', () => {
  let local: KeyFileServer;

  beforeAll(async () => {
    local = await startLocalServerWithKeys(SECRET);
  }, SETUP_TIMEOUT_MS);

  afterAll(() => local.stop());

  it("enforces no limit, not even an app's own, says so, and sends no RateLimit fields", async () => {
    // Act
    const replies = [await post(local.server, 'strict'), await post(local.server, 'strict')];

    // Assert
    expect(statuses(replies)).toEqual([200, 200]);
    expect(replies.map((reply) => header(reply, 'RateLimit-Policy'))).toEqual([undefined, undefined]);
    expect(local.server.output()).toContain(
      "rate limits: off (set APP_RATE_LIMIT to apply one to every app; an app's own rateLimit is not enforced)",
    );
    const warning = await eventually(() =>
      logLines(local.server).find((line) => String(line.message).startsWith('rate limits in the secret')),
    );
    expect(warning).toMatchObject({ level: 'warn', apps: 3 });
  });
});

describe('npm start with RATE_LIMIT_TABLE (counted in DynamoDB, here moto)', () => {
  const tableName = 'payment-api-local-rate-limits';
  let moto: MotoServer;
  let directory: string;
  const servers: LocalServerProcess[] = [];

  beforeAll(async () => {
    moto = await startMoto();
    await createMotoRateLimitTable(moto, tableName);
    directory = await mkdtemp(join(tmpdir(), 'payment-api-e2e-'));
    const keysFile = join(directory, 'keys.json');
    await writeFile(keysFile, JSON.stringify(SECRET), { mode: 0o600 });
    // Two servers on one table, as two Lambda execution environments: the count is theirs together.
    for (let index = 0; index < 2; index++) {
      servers.push(
        await startLocalServer({
          ...MOTO_AWS_ENV,
          // DynamoDB through its own variable; the keys stay in the file.
          AWS_ENDPOINT_URL_DYNAMODB: moto.endpoint,
          PORT: String(await freeLoopbackPort()),
          KEYS_FILE: keysFile,
          APP_RATE_LIMIT: '2',
          RATE_LIMIT_TABLE: tableName,
          // moto on a busy machine can take longer than production's 150 ms: never fail open for that here.
          RATE_LIMIT_DEADLINE_MS: String(EMULATOR_LIMITER_DEADLINE_MS),
        }),
      );
    }
  }, SETUP_TIMEOUT_MS);

  afterAll(async () => {
    await Promise.all(servers.map((server) => stopLocalServer(server).catch(() => null)));
    await moto.stop();
    await rm(directory, { recursive: true, force: true });
  });

  it('names the table and its endpoint in the banner', () => {
    for (const server of servers) {
      expect(server.output()).toContain(
        `counted in DynamoDB table ${tableName} (region ${MOTO_AWS_ENV.AWS_REGION}, endpoint ${moto.endpoint})`,
      );
    }
  });

  it('shares the count between servers: one accepts the request, the other refuses the next', async () => {
    const [first, second] = servers as [LocalServerProcess, LocalServerProcess];

    // Act
    const {
      result: [accepted, refused, appId],
    } = await withinOneWindow(strictWindows, async (attempt) => {
      const appId = strictApp(attempt);
      return [await post(first, appId), await post(second, appId), appId] as const;
    });

    // Assert
    expect(accepted.status).toBe(200);
    expect(refused.status).toBe(429);
    expect(header(refused, 'RateLimit-Policy')).toBe('"app";q=1;w=1000');
    const client = motoDynamoDb(moto);
    try {
      // One item for the app's window (of 1,000 s), counting the one request accepted.
      const { Items = [] } = await client.send(new ScanCommand({ TableName: tableName }));
      const counters = Items.filter((item) => item['pk']?.S?.startsWith(`${appId}#`));
      expect(counters).toHaveLength(1);
      expect(counters[0]?.['used']).toEqual({ N: '1' });
      expect(Number(counters[0]?.['expiresAt']?.N)).toBeGreaterThan(Date.now() / 1000);
    } finally {
      client.destroy();
    }
  });
});

describe('npm start with RATE_LIMIT_TABLE where no DynamoDB answers', () => {
  let local: KeyFileServer | undefined;

  afterEach(async () => {
    await local?.stop();
    local = undefined;
  });

  async function serverWithoutDynamoDb(failure: 'open' | 'closed'): Promise<LocalServerProcess> {
    local = await startLocalServerWithKeys(SECRET, {
      ...MOTO_AWS_ENV,
      AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${await freeLoopbackPort()}`,
      APP_RATE_LIMIT: '2',
      RATE_LIMIT_TABLE: 'payment-api-nowhere',
      APP_RATE_LIMIT_FAILURE: failure,
    });
    return local.server;
  }

  it(
    'fails open by default: the request goes on, without RateLimit fields, and a warning says why',
    async () => {
      const server = await serverWithoutDynamoDb('open');

      const reply = await post(server, 'demo');

      expect(reply.status).toBe(200);
      expect(header(reply, 'RateLimit')).toBeUndefined();
      const warning = await eventually(() =>
        logLines(server).find((line) => line.message === 'rate limiter unavailable'),
      );
      expect(warning).toMatchObject({ level: 'warn', appId: 'demo', failure: 'open' });
    },
    SETUP_TIMEOUT_MS,
  );

  it(
    'fails closed with APP_RATE_LIMIT_FAILURE=closed: 503 unavailable',
    async () => {
      const server = await serverWithoutDynamoDb('closed');

      const reply = await post(server, 'demo');

      expect(reply.status).toBe(503);
      expect(reply.body).toBe(errorBody('unavailable'));
    },
    SETUP_TIMEOUT_MS,
  );
});
