/**
 * Run as its own Node process (`tsx test/support/body-memory-driver.ts <mode> <megabytes> <calls>`), so its memory
 * figures are its own: builds a body of nested arrays (`[[[[…`) of that size, then either hands it to the handler
 * `calls` times (mode `handler`) or does what the handler did before the body limit, JSON.parse it once (mode
 * `parse`). Prints one JSON line: the statuses, the peak RSS before and after (the body is built before the first
 * reading, so it is not counted), and the median time per call. The body limit test asserts the statuses and the
 * memory; the bench prints every figure.
 */
import { performance } from 'node:perf_hooks';
import { createHandler } from '../../lambda/payment/create-handler';
import { parseKeyring } from '../../shared/keys/keyring';
import { createJsonLogger } from '../../shared/logger';
import { requestOf } from './events';
import { DEMO_KEY, SECRET_STRING } from './keys';

export interface BodyMemoryReport {
  readonly mode: 'handler' | 'parse';
  readonly bodyBytes: number;
  readonly statuses: readonly number[];
  /** Peak resident set size (process.resourceUsage().maxRSS) before the first call and after the last, in KiB. */
  readonly peakRssBeforeKib: number;
  readonly peakRssAfterKib: number;
  readonly medianMsPerCall: number;
}

function nestedArrays(bytes: number): string {
  const depth = Math.floor(bytes / 2);
  return '['.repeat(depth) + ']'.repeat(depth);
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

async function main(): Promise<void> {
  const [mode = 'handler', megabytes = '6', callsText = '20'] = process.argv.slice(2);
  if (mode !== 'handler' && mode !== 'parse') throw new Error(`mode must be handler or parse, got ${mode}`);
  const body = nestedArrays(Number(megabytes) * 1_000_000);
  const { keyring } = parseKeyring(SECRET_STRING);
  const handle = createHandler({
    keys: { getKeys: () => Promise.resolve({ keyring, stale: false }) },
    logger: createJsonLogger('info', () => undefined),
  });
  const event = requestOf('demo', DEMO_KEY, { body });

  const peakRssBeforeKib = process.resourceUsage().maxRSS;
  const statuses: number[] = [];
  const durations: number[] = [];
  const calls = mode === 'parse' ? 1 : Number(callsText);
  for (let call = 0; call < calls; call++) {
    const start = performance.now();
    if (mode === 'handler') {
      statuses.push((await handle(event)).statusCode);
    } else {
      JSON.parse(body);
      statuses.push(200);
    }
    durations.push(performance.now() - start);
  }
  const report: BodyMemoryReport = {
    mode,
    bodyBytes: body.length,
    statuses,
    peakRssBeforeKib,
    peakRssAfterKib: process.resourceUsage().maxRSS,
    medianMsPerCall: median(durations),
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  });
}
