/**
 * The payment Lambda as it runs: its esbuild bundle, required by plain `node` in a fresh process. bench/lambda-bounds.ts
 * bundles this file too and runs it with the environment of a stack whose registry a local fake Secrets Manager
 * serves (lambda-bounds-registry.ts). Every app id and key is derived from its index (lambda-bounds-apps.ts), so this
 * process holds nothing of the registry beside what the Lambda's code holds. One JSON line of figures goes to file
 * descriptor 3 (standard output carries the Lambda's own log and metric lines).
 *
 * - `node <this> <lambda bundle> memory <apps> <hot requests>`: every app asked for once, one request at a time,
 *   within one TTL; then a known hot app `hot requests` times. Memory after the first request and after all apps
 *   (after a full collection), the highest RSS seen on the way (every 1,000 requests), the hot app's handler time.
 * - `node <this> <lambda bundle> outage <seconds>`: a flood of unknown app ids, one request at a time, while every
 *   call fails (the fake counts the calls); prints the requests answered.
 */
import { writeSync } from 'node:fs';
import { getHeapStatistics } from 'node:v8';
import { appNumbered } from './lambda-bounds-apps';

interface LambdaModule {
  readonly handler: (event: unknown, context: { awsRequestId: string }) => Promise<{ statusCode: number }>;
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

const megabytes = (bytes: number): number => Math.round((bytes / 1_048_576) * 10) / 10;

/** process.memoryUsage() after a full collection, with what V8 itself has malloc'd. */
function memory(prefix: string): Record<string, number> {
  globalThis.gc?.();
  const usage = process.memoryUsage();
  return {
    [`${prefix}RssMb`]: megabytes(usage.rss),
    [`${prefix}HeapUsedMb`]: megabytes(usage.heapUsed),
    [`${prefix}HeapTotalMb`]: megabytes(usage.heapTotal),
    [`${prefix}ExternalMb`]: megabytes(usage.external),
    [`${prefix}ArrayBuffersMb`]: megabytes(usage.arrayBuffers),
    [`${prefix}V8MallocedMb`]: megabytes(getHeapStatistics().malloced_memory),
  };
}

async function distinctApps(handler: LambdaModule['handler'], apps: number, hotRequests: number) {
  const first = appNumbered(0);
  await handler(event(first.appId, first.key), { awsRequestId: 'first' });
  const atStart = memory('start');
  let ok = 0;
  let peakRss = 0;
  for (let index = 0; index < apps; index++) {
    const { appId, key } = appNumbered(index);
    const answer = await handler(event(appId, key), { awsRequestId: `bench-${index}` });
    if (answer.statusCode === 200) ok++;
    if (index % 1_000 === 0) peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
  const afterApps = memory('after');
  const hotEvent = event(first.appId, first.key);
  const times: number[] = [];
  for (let request = 0; request < hotRequests; request++) {
    const started = process.hrtime.bigint();
    await handler(hotEvent, { awsRequestId: `hot-${request}` });
    times.push(Number(process.hrtime.bigint() - started) / 1_000);
  }
  const sorted = times.sort((a, b) => a - b);
  return {
    ok,
    ...atStart,
    peakRssMb: megabytes(peakRss),
    ...afterApps,
    hotMedianUs: sorted[Math.floor(sorted.length / 2)] ?? 0,
    hotP99Us: sorted[Math.floor(sorted.length * 0.99)] ?? 0,
  };
}

async function outage(handler: LambdaModule['handler'], seconds: number) {
  const until = Date.now() + seconds * 1_000;
  let requests = 0;
  while (Date.now() < until) {
    const appId = `unknown-${requests}-${Math.random().toString(36).slice(2)}`;
    await handler(event(appId, 'payk_'.padEnd(48, 'x')), { awsRequestId: `outage-${requests}` });
    requests++;
  }
  return { requests };
}

async function main(): Promise<Record<string, number>> {
  const [bundle = '', mode = 'memory', first = '100000', second = '20000'] = process.argv.slice(2);
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the bundle is CommonJS, loaded as Lambda loads it
  const { handler } = require(bundle) as LambdaModule;
  return mode === 'outage'
    ? outage(handler, Number(first))
    : distinctApps(handler, Number(first), Number(second));
}

main().then(
  (figures) => {
    writeSync(3, JSON.stringify(figures) + '\n');
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
