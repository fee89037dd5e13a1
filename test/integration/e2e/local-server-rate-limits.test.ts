/**
 * Per-app rate limits on the local server as a user runs it (`npm start` with APP_RATE_LIMIT), where only real
 * processes show it: a DynamoDB table (here moto's) shared by several servers, and what a request gets when that
 * table cannot be reached, failing open or closed.
 *
 * What a limit does to one request (429, Retry-After and the RateLimit fields, an app's own limit against the
 * default, the order of the checks, the 429's log line, no limit without APP_RATE_LIMIT) is
 * test/unit/lambda/payment/create-handler-limits.test.ts's; the settings and the banner are
 * test/unit/tools/local-server/{local-settings,banner}.test.ts's; a real server's 429 against openapi.yaml is
 * test/integration/openapi/local-server-answers.test.ts's.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { errorBody } from '../../../shared/api/responses';
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
import { freeLoopbackPort } from '../../support/loopback';
import {
  createMotoRateLimitTable,
  EMULATOR_LIMITER_DEADLINE_MS,
  MOTO_AWS_ENV,
  motoDynamoDb,
  startMoto,
  type MotoServer,
} from '../../support/moto';

afterAll(() => {
  killAllLocalServers();
});

const KEYS = { demo: generateKey(), strict: generateKey(), spare: generateKey() };

/** One request per 1,000 s: in windows of 1,000 s, offset per app. */
const STRICT_LIMIT = { perSecond: 0.001, burst: 1 };

/**
 * `demo` has the server's default limit; `strict` one request per 1,000 s, so its second request is refused however
 * slowly the machine runs (unless a window ends between them: withinOneWindow).
 */
const SECRET = {
  demo: [KEYS.demo],
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
    const [accepted, refused, appId] = await withinOneWindow(strictWindows, async (attempt) => {
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
    'fails open with APP_RATE_LIMIT_FAILURE=open: the request goes on, without RateLimit fields, and a warning says why',
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
