/**
 * What a refused request costs, by cause: the handler end to end in-process (authentication, the rules of a right
 * key, the log line serialized but not written), rounds interleaved so that warm-up and noise hit every case alike.
 * Also the log line alone, in the shape it had before a wrong key and an unknown app logged the same fields.
 */
import { createHandler } from '../../lambda/payment/create-handler';
import { parseKeyring } from '../../shared/keys/keyring';
import { createJsonLogger, type LogFields } from '../../shared/logger';
import { paymentEvent } from '../../test/support/events';
import { fmt, median } from './stats';

const KEYS = {
  partner: 'bench-partner-key-0123456789abcdef',
  expired: 'bench-expired-key-0123456789abcdef',
  fenced: 'bench-fenced-key-0123456789abcdef',
  wrong: 'bench-wrong-key-0123456789abcdefgh',
};

/** The event's source is 203.0.113.10 (test/support/events.ts): outside the fenced app's network. */
const SECRET = JSON.stringify({
  partner: [KEYS.partner],
  expiring: [{ key: KEYS.expired, expires: '2020-01-01T00:00:00Z' }],
  fenced: { keys: [KEYS.fenced], allowedCidrs: ['198.51.100.0/24'] },
});

/** Each case, and the case it is compared with: the same app's wrong key (an unknown app: a real app's). */
const CASES: readonly (readonly [label: string, appId: string, appKey: string, against: number])[] = [
  ['wrong key of an existing app (401 wrong_key)', 'partner', KEYS.wrong, 0],
  ['right key (200)', 'partner', KEYS.partner, 0],
  ['any key of an unknown app (401 unknown_app)', 'nobody', KEYS.wrong, 0],
  ['wrong key of an app with an expired key (401 wrong_key)', 'expiring', KEYS.wrong, 3],
  ['its right key, expired (401 expired_key)', 'expiring', KEYS.expired, 3],
  ['wrong key of an app fenced to a network (401 wrong_key)', 'fenced', KEYS.wrong, 5],
  ['its right key, from another network (401 source_not_allowed)', 'fenced', KEYS.fenced, 5],
];

/** Median ns per call of each function, over interleaved rounds. */
async function interleaved(
  calls: readonly (() => unknown)[],
  perRound: number,
  rounds = 60,
): Promise<number[]> {
  const samples = calls.map(() => [] as number[]);
  for (let round = 0; round < rounds; round++) {
    for (const [index, call] of calls.entries()) {
      const start = process.hrtime.bigint();
      for (let repeat = 0; repeat < perRound; repeat++) await call();
      if (round >= 10) samples[index]?.push(Number(process.hrtime.bigint() - start) / perRound);
    }
  }
  return samples.map(median);
}

async function handlerLines(): Promise<string[]> {
  const { keyring } = parseKeyring(SECRET);
  let written = 0;
  let counted = 0;
  const handle = createHandler({
    keys: { getKeys: () => Promise.resolve({ keyring, stale: false }) },
    // Serialized and counted as in the Lambda; neither written to stdout nor flushed.
    logger: createJsonLogger('info', (line) => (written += line.length)),
    metrics: { count: () => (counted += 1) },
  });
  const events = CASES.map(([, appId, appKey]) =>
    paymentEvent([
      ['Content-Type', 'application/json'],
      ['App-id', appId],
      ['App-key', appKey],
    ]),
  );
  const statuses = await Promise.all(events.map(async (event) => (await handle(event)).statusCode));
  const medians = await interleaved(
    events.map((event) => () => handle(event)),
    2_000,
    120,
  );
  if (written === 0 || counted === 0) throw new Error('the handler logged or counted nothing');
  return CASES.map(([label, , , against], index) => {
    const time = medians[index] ?? 0;
    const difference = index === against ? '' : `${fmt((time - (medians[against] ?? 0)) / 1000, 2)} µs`;
    return `| ${label} | ${statuses[index] ?? '?'} | ${fmt(time / 1000, 2)} µs | ${difference} |`;
  });
}

async function logLineLines(): Promise<string[]> {
  const logger = createJsonLogger('info', () => undefined);
  const base: LogFields = {
    apiRequestId: 'c6af9ac6-7b61-11e6-9a41-93e8deadbeef',
    sourceIp: '203.0.113.10',
    status: 401,
  };
  const shapes: readonly (readonly [string, LogFields])[] = [
    ['before: wrong key `{reason, appId}`', { ...base, reason: 'wrong_key', appId: 'partner' }],
    ['before: unknown app `{reason}`', { ...base, reason: 'unknown_app' }],
    [
      'now: wrong key `{reason, appId, keyId: null}`',
      { ...base, reason: 'wrong_key', appId: 'partner', keyId: null },
    ],
    [
      'now: unknown app `{reason, appId: null, keyId: null}`',
      { ...base, reason: 'unknown_app', appId: null, keyId: null },
    ],
  ];
  const medians = await interleaved(
    shapes.map(([, fields]) => () => {
      logger.info('request refused', fields);
    }),
    5_000,
  );
  return shapes.map(([label], index) => `| ${label} | ${fmt((medians[index] ?? 0) / 1000, 3)} µs |`);
}

export async function timingLines(): Promise<string[]> {
  return [
    'The handler per request, in-process, median of interleaved rounds; the difference is from the wrong key above it',
    "(the same app's; for an unknown app, a real app's):",
    '| case | status | time | difference |',
    '|---|---|---|---|',
    ...(await handlerLines()),
    '',
    'The 401 log line alone (serialized, not written), before and after both paths logged the same fields:',
    '| line | time |',
    '|---|---|',
    ...(await logLineLines()),
  ];
}
