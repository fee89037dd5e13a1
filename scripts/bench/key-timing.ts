/**
 * What the key format and the stored form cost a request, in-process, the handler end to end (log lines
 * serialized, not written):
 *
 * - existence: the first request naming an app after its shard loaded (a fresh lazily built keyring each sample,
 *   as the Lambda has after each refresh), for a known one-key app, a known app of the heaviest shape and an
 *   unknown id, each with a wrong key; and the same once the entry is built. The difference is what timing could
 *   tell of whether an app exists (docs/keys.md).
 * - stored form: a key stored as a `d:` digest against the same key stored plain, 100,000 requests each, every
 *   request timed alone, in interleaved blocks: median and p99.
 * - refused before any lookup: a malformed key of the prefix, and an App-id no app can have, against a wrong key of
 *   a known app.
 */
import { createHandler, type PaymentHandler } from '../../lambda/payment/create-handler';
import type { KeyringProvider } from '../../lambda/payment/key-cache';
import { serializeKeyDocument, type DocumentApp } from '../../shared/keys/key-document';
import { generateKey, toCompactDigestForm } from '../../shared/keys/key-material';
import type { Keyring } from '../../shared/keys/keyring';
import { parseKeyringLazily } from '../../shared/keys/lazy-keyring';
import { createJsonLogger } from '../../shared/logger';
import { paymentEvent } from '../../test/support/events';
import { heaviestApp } from './secret-size';
import { fmt, median, percentile, spread } from './stats';

function eventOf(appId: string, appKey: string): unknown {
  return paymentEvent([
    ['Content-Type', 'application/json'],
    ['App-id', appId],
    ['App-key', appKey],
  ]);
}

/** A handler over whatever keyring `current` holds when a request comes. */
function handlerOver(current: () => Keyring): PaymentHandler {
  const keys: KeyringProvider = { getKeys: () => Promise.resolve({ keyring: current(), stale: false }) };
  return createHandler({
    keys,
    logger: createJsonLogger('info', () => undefined),
    metrics: { count: () => 0 },
  });
}

/** A shard of 150 apps (about a full shard of the heaviest shape), one of them light. */
function shardText(): { text: string; light: string; heavy: string } {
  const document = new Map<string, DocumentApp>();
  for (let index = 0; index < 149; index++) {
    document.set(`partner-${String(index).padStart(5, '0')}`, heaviestApp());
  }
  document.set('light-app', { keys: [{ stored: toCompactDigestForm(generateKey()) }] });
  return { text: serializeKeyDocument(document), light: 'light-app', heavy: 'partner-00042' };
}

async function timeOnce(handle: PaymentHandler, event: unknown): Promise<number> {
  const start = process.hrtime.bigint();
  await handle(event);
  return Number(process.hrtime.bigint() - start) / 1000;
}

async function existenceLines(): Promise<string[]> {
  const { text, light, heavy } = shardText();
  let keyring: Keyring = parseKeyringLazily(text, { onProblems: () => undefined }).keyring;
  const fresh = (): void => {
    keyring = parseKeyringLazily(text, { onProblems: () => undefined }).keyring;
  };
  const handle = handlerOver(() => keyring);
  const wrongKey = generateKey();
  const cases = [
    ['an unknown id', eventOf('nobody-here', wrongKey)],
    ['a known one-key app', eventOf(light, wrongKey)],
    ['a known app of the heaviest shape', eventOf(heavy, wrongKey)],
  ] as const;
  const first = cases.map(() => [] as number[]);
  const later = cases.map(() => [] as number[]);
  const SAMPLES = 3_000;
  for (let sample = 0; sample < SAMPLES + 200; sample++) {
    for (const [index, [, event]] of cases.entries()) {
      fresh();
      const once = await timeOnce(handle, event);
      const again = await timeOnce(handle, event);
      if (sample >= 200) {
        first[index]?.push(once);
        later[index]?.push(again);
      }
    }
  }
  const unknownFirst = median(first[0] ?? []);
  const unknownLater = median(later[0] ?? []);
  return [
    `The first request naming an app after its shard loaded (a fresh lazy keyring of 150 apps each sample), a wrong key, ${SAMPLES} samples each:`,
    '| App-id | first request: median / p90 | than an unknown id | the next request: median | than an unknown id |',
    '|---|---|---|---|---|',
    ...cases.map(([label], index) => {
      const firstMedian = median(first[index] ?? []);
      const laterMedian = median(later[index] ?? []);
      return (
        `| ${label} | ${fmt(firstMedian, 2)} / ${fmt(percentile(first[index] ?? [], 90), 2)} µs | ` +
        `${index === 0 ? '' : `${fmt(firstMedian - unknownFirst, 2)} µs`} | ${fmt(laterMedian, 2)} µs | ` +
        `${index === 0 ? '' : `${fmt(laterMedian - unknownLater, 2)} µs`} |`
      );
    }),
  ];
}

async function storedFormLines(): Promise<string[]> {
  const plainKey = generateKey();
  const digestKey = generateKey();
  const keyring = parseKeyringLazily(
    JSON.stringify({ plain: [plainKey], digest: [toCompactDigestForm(digestKey)] }),
    { onProblems: () => undefined },
  ).keyring;
  const handle = handlerOver(() => keyring);
  const events = [eventOf('plain', plainKey), eventOf('digest', digestKey)];
  const REQUESTS = 100_000;
  const BLOCK = 100;
  const RUNS = 5;
  for (let warm = 0; warm < 5_000; warm++) for (const event of events) await handle(event);
  const p99 = (values: readonly number[]): number => percentile(values, 99);
  const rows: string[] = [];
  const medianRatios: number[] = [];
  const p99Ratios: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const samples = events.map(() => [] as number[]);
    for (let block = 0; block < REQUESTS / BLOCK; block++) {
      for (const [index, event] of events.entries()) {
        for (let request = 0; request < BLOCK; request++) samples[index]?.push(await timeOnce(handle, event));
      }
    }
    const [plain = [], digest = []] = samples;
    medianRatios.push((median(digest) / median(plain) - 1) * 100);
    p99Ratios.push((p99(digest) / p99(plain) - 1) * 100);
    rows.push(
      `| ${run + 1} | ${fmt(median(plain), 2)} / ${fmt(p99(plain), 2)} µs | ${fmt(median(digest), 2)} / ${fmt(p99(digest), 2)} µs | ` +
        `${fmt(medianRatios[run] ?? 0, 1)}% / ${fmt(p99Ratios[run] ?? 0, 1)}% |`,
    );
  }
  return [
    `A right key stored plain against one stored as a d: digest (200), ${REQUESTS.toLocaleString('en')} requests of each per run, each timed alone, blocks of ${BLOCK} interleaved:`,
    '| run | plain: median / p99 | d: digest: median / p99 | digest against plain: median / p99 |',
    '|---|---|---|---|',
    ...rows,
    `digest against plain over ${RUNS} runs: median ${spread(medianRatios, 1, '%')}; p99 ${spread(p99Ratios, 1, '%')}`,
  ];
}

async function screenLines(): Promise<string[]> {
  const key = generateKey();
  const keyring = parseKeyringLazily(JSON.stringify({ partner: [toCompactDigestForm(key)] }), {
    onProblems: () => undefined,
  }).keyring;
  const handle = handlerOver(() => keyring);
  const malformed = key.slice(0, -1) + (key.endsWith('0') ? '1' : '0');
  const cases = [
    ['a wrong key of a known app (looked up)', eventOf('partner', generateKey())],
    ['a malformed key of the prefix (refused unread)', eventOf('partner', malformed)],
    ['an App-id of 8 KB (refused unread)', eventOf('a'.repeat(8192), key)],
  ] as const;
  const samples = cases.map(() => [] as number[]);
  for (let round = 0; round < 60; round++) {
    for (const [index, [, event]] of cases.entries()) {
      for (let request = 0; request < 500; request++) {
        const took = await timeOnce(handle, event);
        if (round >= 10) samples[index]?.push(took);
      }
    }
  }
  return [
    'Refused before any lookup, against a wrong key that is looked up (all 401), median per request:',
    '| request | median | p99 |',
    '|---|---|---|',
    ...cases.map(
      ([label], index) =>
        `| ${label} | ${fmt(median(samples[index] ?? []), 2)} µs | ${fmt(percentile(samples[index] ?? [], 99), 2)} µs |`,
    ),
  ];
}

export async function keyTimingLines(): Promise<string[]> {
  return [...(await existenceLines()), '', ...(await storedFormLines()), '', ...(await screenLines())];
}
