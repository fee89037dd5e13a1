/** Bundle sizes, cold starts and Secrets Manager calls per key-cache TTL, of a Lambda bundle as NodejsFunction builds it. */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { SLIM_BUNDLING } from '../../lib/bundled-function';
import type { FaultProxy } from '../../test/support/fault-proxy';
import { EVENT, PROJECT_ROOT } from './fixtures';
import { fmt } from './stats';

const TTL_WINDOW_SECONDS = 1;
const TTL_WINDOWS = 6;

/** esbuild options NodejsFunction passes for our functions (lib/bundled-function.ts), before SLIM_BUNDLING. */
export const NODEJS_FUNCTION_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node24',
  format: 'cjs',
  minify: true,
  logLevel: 'error',
} as const;

export async function bundle(entry: string, outfile: string, slim: boolean): Promise<string> {
  await build({
    ...NODEJS_FUNCTION_OPTIONS,
    entryPoints: [join(PROJECT_ROOT, entry)],
    outfile,
    absWorkingDir: PROJECT_ROOT,
    ...(slim ? { mainFields: [...SLIM_BUNDLING.mainFields], alias: { ...SLIM_BUNDLING.aliases } } : {}),
  });
  return outfile;
}

export function sizes(file: string): string {
  const bytes = statSync(file).size;
  return `${bytes.toLocaleString('en')} bytes (${gzipSync(readFileSync(file)).length.toLocaleString('en')} gzipped)`;
}

/** In a fresh Node process: require the bundle, invoke it once; time from before the require to the answer. */
const COLD_DRIVER = `
const started = process.hrtime.bigint();
const { handler } = require(process.argv[1]);
handler(JSON.parse(process.argv[2]), { awsRequestId: 'bench', functionName: 'bench' }).then((result) => {
  const answered = process.hrtime.bigint();
  process.stderr.write(JSON.stringify({ status: result.statusCode, ms: Number(answered - started) / 1e6 }) + '\\n');
});
`;

export async function coldStart(
  bundleFile: string,
  env: Record<string, string>,
  event: unknown = EVENT,
): Promise<number> {
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', COLD_DRIVER, bundleFile, JSON.stringify(event)],
    { env: { PATH: process.env.PATH ?? '', ...env } },
  );
  const result = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { status: number; ms: number };
  if (result.status !== 200) throw new Error(`${bundleFile} answered ${result.status}, not 200`);
  return result.ms;
}

/** In a fresh process, one request at a time for `windows` TTLs; the caller counts the calls it makes. */
const TTL_DRIVER = `
const { handler } = require(process.argv[1]);
const event = JSON.parse(process.argv[2]);
const until = Date.now() + Number(process.argv[3]);
(async () => {
  let requests = 0;
  while (Date.now() < until) {
    const result = await handler(event, { awsRequestId: 'bench-' + requests, functionName: 'bench' });
    if (result.statusCode !== 200) throw new Error('status ' + result.statusCode);
    requests++;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  process.stderr.write(JSON.stringify({ requests }) + '\\n');
})();
`;

export async function callsPerTtl(
  bundleFile: string,
  env: Record<string, string>,
  proxy: FaultProxy,
): Promise<string> {
  const before = proxy.calls.length;
  const durationMs = TTL_WINDOW_SECONDS * TTL_WINDOWS * 1000;
  const { stderr } = await promisify(execFile)(
    process.execPath,
    ['-e', TTL_DRIVER, bundleFile, JSON.stringify(EVENT), String(durationMs)],
    { env: { PATH: process.env.PATH ?? '', ...env, KEY_CACHE_TTL_SECONDS: String(TTL_WINDOW_SECONDS) } },
  );
  const { requests } = JSON.parse(stderr.trim().split('\n').pop() ?? '{}') as { requests: number };
  const calls = proxy.calls.slice(before).filter((call) => call.operation === 'GetSecretValue').length;
  return `${calls} GetSecretValue calls for ${requests} requests over ${TTL_WINDOWS} TTLs of ${TTL_WINDOW_SECONDS} s (one at init, then one per TTL): ${fmt(calls / TTL_WINDOWS, 2)} per TTL`;
}
