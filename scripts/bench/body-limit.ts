/**
 * The body limit (64 KiB, 64 deep): what a 6 MB body of nested arrays costs now and what parsing it cost before, each
 * in a process of its own (test/support/body-memory-driver.ts, the one the memory test runs), and in-process what the
 * handler takes for bodies at the limits.
 */
import { join } from 'node:path';
import { createHandler } from '../../lambda/payment/create-handler';
import { parseKeyring } from '../../shared/keys/keyring';
import { createJsonLogger } from '../../shared/logger';
import type { BodyMemoryReport } from '../../test/support/body-memory-driver';
import { paymentEvent } from '../../test/support/events';
import { DEMO_KEY, SECRET_STRING } from '../../test/support/keys';
import { spawnTool, TSX } from '../../test/support/tool-process';
import { fmt, median } from './stats';

const DRIVER = join(__dirname, '..', '..', 'test', 'support', 'body-memory-driver.ts');

async function driven(mode: 'handler' | 'parse', calls: number): Promise<BodyMemoryReport> {
  const run = await spawnTool(TSX, [DRIVER, mode, '6', String(calls)], {});
  if (run.code !== 0) throw new Error(`the body driver failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as BodyMemoryReport;
}

const addedMb = (report: BodyMemoryReport): number =>
  (report.peakRssAfterKib - report.peakRssBeforeKib) / 1024;

/** Median µs per handler call for each body, rounds interleaved. */
async function inProcess(bodies: readonly (readonly [string, string])[]): Promise<string[]> {
  const { keyring } = parseKeyring(SECRET_STRING);
  const handle = createHandler({
    keys: { getKeys: () => Promise.resolve({ keyring, stale: false }) },
    logger: createJsonLogger('info', () => undefined),
  });
  const events = bodies.map(([, body]) =>
    paymentEvent(
      [
        ['Content-Type', 'application/json'],
        ['App-id', 'demo'],
        ['App-key', DEMO_KEY],
      ],
      { body },
    ),
  );
  const statuses = await Promise.all(events.map(async (event) => (await handle(event)).statusCode));
  const samples = bodies.map(() => [] as number[]);
  for (let round = 0; round < 40; round++) {
    for (const [index, event] of events.entries()) {
      const start = process.hrtime.bigint();
      for (let call = 0; call < 20; call++) await handle(event);
      if (round >= 5) samples[index]?.push(Number(process.hrtime.bigint() - start) / 20 / 1000);
    }
  }
  return bodies.map(
    ([label], index) =>
      `| ${label} | ${statuses[index] ?? '?'} | ${fmt(median(samples[index] ?? []), 1)} µs |`,
  );
}

export async function bodyLimitLines(): Promise<string[]> {
  const handled = await driven('handler', 20);
  const parsed = await driven('parse', 1);
  const atLimit = `"${'a'.repeat(65_534)}"`;
  return [
    'A body of 6 MB of nested arrays ([[[[...), each in a fresh Node process:',
    '| | answer | median per request | peak RSS added |',
    '|---|---|---|---|',
    `| the handler now (20 requests) | ${handled.statuses[0] ?? '?'} | ${fmt(handled.medianMsPerCall, 3)} ms | ${fmt(addedMb(handled))} MB |`,
    `| JSON.parse of it, what the handler did before the limit | (200) | ${fmt(parsed.medianMsPerCall, 0)} ms | ${fmt(addedMb(parsed))} MB |`,
    '',
    'The handler in-process, median per request (authentication, media type and body; logs serialized, not written):',
    '| body | status | time |',
    '|---|---|---|',
    ...(await inProcess([
      ['`{}`', '{}'],
      ['65,536 bytes of JSON (at the limit)', atLimit],
      ['65,537 bytes (over it)', `${atLimit} `],
      ['6 MB', '['.repeat(6_000_000)],
      ['arrays nested 64 deep', '['.repeat(64) + ']'.repeat(64)],
      ['arrays nested 65 deep', '['.repeat(65) + ']'.repeat(65)],
    ])),
  ];
}
