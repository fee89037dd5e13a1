/**
 * One variant of the payment Lambda's key code in a fresh process (`tsx lambda-bounds-driver.ts <root> <mode>`), for
 * bench/lambda-bounds.ts: `<root>` is a tree holding lambda/ and shared/ (today's, or an earlier commit's, from git
 * history). Prints one JSON line of figures on standard output.
 * - memory: 100,000 distinct apps (merchant-<uuid>, the heaviest shape) in 256 shards held in memory, each asked for
 *   once through the handler within one TTL; then a known hot app asked 20,000 times. RSS after, and the hot app's
 *   handler time (median, p99).
 * - outage: 64 shards whose every fetch fails after 20 ms (a throttled answer's round trip), a flood of unknown app
 *   ids one request at a time for 6 s: fetches started per whole second.
 */
import { createHash, randomUUID } from 'node:crypto';
import { join } from 'node:path';

type HandlerModule = typeof import('../../lambda/payment/create-handler');
type ShardedModule = typeof import('../../lambda/payment/sharded-keys');
type ShardModule = typeof import('../../shared/keys/shard');
type LoggerModule = typeof import('../../shared/logger');

const [root = '', mode = 'memory'] = process.argv.slice(2);

async function load() {
  const handlerModule = (await import(join(root, 'lambda/payment/create-handler'))) as HandlerModule;
  const sharded = (await import(join(root, 'lambda/payment/sharded-keys'))) as ShardedModule;
  const shard = (await import(join(root, 'shared/keys/shard'))) as ShardModule;
  const logger = (await import(join(root, 'shared/logger'))) as LoggerModule;
  return { ...handlerModule, ...sharded, ...shard, ...logger };
}

function event(appId: string, key: string): unknown {
  const headers = { 'Content-Type': 'application/json', 'App-id': appId, 'App-key': key };
  return {
    resource: '/payment',
    path: '/payment',
    httpMethod: 'POST',
    headers,
    multiValueHeaders: Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, [value]])),
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    requestContext: { requestId: 'bench', identity: { sourceIp: '203.0.113.10' } },
    body: '{}',
    isBase64Encoded: false,
  };
}

/** App `index`: a merchant-<uuid> id and a key, both from SHA-256 of the index. */
function appNumbered(index: number): { appId: string; key: string } {
  const hex = createHash('sha256').update(`id ${index}`).digest('hex');
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return {
    appId: `merchant-${uuid}`,
    key: `payk_${createHash('sha256').update(`key ${index}`).digest('base64url').slice(0, 43)}`,
  };
}

const layoutOf = (shards: number) => ({
  shards,
  shardIds: Array.from({ length: shards }, (_, index) => `bench/shard-${index}`),
});

async function memory(): Promise<Record<string, number>> {
  const m = await load();
  const SHARDS = 256;
  const APPS = 100_000;
  // The heaviest shape: two keys mid-rotation (the older expiring) and an allowlist of two blocks. Ids and keys are
  // derived from the index, so this process keeps no list of them beside what the Lambda's code holds.
  const texts = (() => {
    const documents: Record<string, unknown>[] = Array.from({ length: SHARDS }, () => ({}));
    for (let index = 0; index < APPS; index++) {
      const { appId, key } = appNumbered(index);
      const home = documents[m.shardOf(appId, SHARDS)];
      if (home) {
        home[appId] = {
          keys: [{ key: `${key.slice(0, -4)}prev`, expires: '2030-01-01T00:00:00Z' }, key],
          allowedCidrs: ['203.0.113.0/24', '2001:db8::/32'],
        };
      }
    }
    return documents.map((document) => JSON.stringify(document));
  })();
  const keys = new m.ShardedKeys({
    layout: layoutOf(SHARDS),
    sourceFor: (index, id) => ({
      description: id,
      fetchSecretString: () => Promise.resolve(texts[index] ?? '{}'),
    }),
    logger: m.createJsonLogger('error', () => undefined),
    ttlMs: 3_600_000,
    maxStaleMs: 0,
  });
  const handler = m.createHandler({ keys, logger: m.createJsonLogger('error', () => undefined) });
  global.gc?.();
  const rssBefore = process.memoryUsage().rss;
  let ok = 0;
  for (let index = 0; index < APPS; index++) {
    const { appId, key } = appNumbered(index);
    if ((await handler(event(appId, key))).statusCode === 200) ok++;
  }
  const hot = appNumbered(0);
  const times: number[] = [];
  for (let request = 0; request < 20_000; request++) {
    const started = process.hrtime.bigint();
    await handler(event(hot.appId, hot.key));
    times.push(Number(process.hrtime.bigint() - started) / 1_000);
  }
  global.gc?.();
  const sorted = times.sort((a, b) => a - b);
  return {
    ok,
    rssMb: process.memoryUsage().rss / 1_048_576,
    rssGrowthMb: (process.memoryUsage().rss - rssBefore) / 1_048_576,
    gc: global.gc === undefined ? 0 : 1,
    heapMb: process.memoryUsage().heapUsed / 1_048_576,
    hotMedianUs: sorted[Math.floor(sorted.length / 2)] ?? 0,
    hotP99Us: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
  };
}

async function outage(): Promise<Record<string, number>> {
  const m = await load();
  const SHARDS = 64;
  const fetches: number[] = [];
  const keys = new m.ShardedKeys({
    layout: layoutOf(SHARDS),
    sourceFor: (_index, id) => ({
      description: id,
      deadlineMs: 1_500,
      fetchSecretString: () => {
        fetches.push(Date.now());
        return new Promise((_, reject) =>
          setTimeout(() => {
            reject(Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' }));
          }, 20),
        );
      },
    }),
    logger: m.createJsonLogger('error', () => undefined),
    ttlMs: 60_000,
    maxStaleMs: 900_000,
  });
  const handler = m.createHandler({ keys, logger: m.createJsonLogger('error', () => undefined) });
  const start = Date.now();
  while (Date.now() - start < 6_000)
    await handler(event(`unknown-${randomUUID()}`, 'payk_x'.padEnd(43, 'x')));
  const perSecond = Array.from(
    { length: 6 },
    (_, second) => fetches.filter((at) => Math.floor((at - start) / 1_000) === second).length,
  );
  return Object.fromEntries(perSecond.map((count, second) => [`second${second}`, count]));
}

(mode === 'outage' ? outage() : memory()).then(
  (figures) => {
    process.stdout.write(JSON.stringify(figures) + '\n');
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
