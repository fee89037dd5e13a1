import {
  createScanningHandler,
  type ScanningDependencies,
} from '../../../../lambda/secret-scanning/create-handler';
import type { LeakedKey } from '../../../../lambda/secret-scanning/leak-notice';
import { PublicKeyCache } from '../../../../lambda/secret-scanning/public-keys';
import { REPORT_LIMITS } from '../../../../lambda/secret-scanning/settings';
import { parseKeyDocument, type DocumentApp } from '../../../../shared/keys/key-document';
import { generatePrefixedKey } from '../../../../shared/keys/key-format';
import { keyIdOf } from '../../../../shared/keys/key-document';
import { toCompactDigestForm } from '../../../../shared/keys/key-material';
import { shardOf } from '../../../../shared/keys/shard';
import { captureLogs } from '../../../support/capture-logger';
import { shardTexts } from '../../../support/shards';
import {
  createGithubSigner,
  memoryShards,
  publicKeysDocument,
  reportEntry,
  scanningEvent,
  type MemoryShards,
} from '../../../support/secret-scanning';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const github = createGithubSigner('c0ffee'.repeat(8));
const stranger = createGithubSigner('stranger');

/** Apps spread over 4 shards as the registry places them: one key stored as a compact digest, one plain. */
const SHARDS = 4;
const LEAKED = generatePrefixedKey('pay');
const PLAIN = generatePrefixedKey('pay');
const UNTOUCHED = generatePrefixedKey('pay');
const APPS = new Map<string, DocumentApp>([
  [
    'partner-a',
    { keys: [{ stored: toCompactDigestForm(LEAKED) }, { stored: toCompactDigestForm(UNTOUCHED) }] },
  ],
  ['partner-b', { keys: [{ stored: PLAIN }] }],
]);
const initialTexts = (): string[] => shardTexts(APPS, SHARDS);

interface Arrangement {
  readonly handle: (event: unknown) => ReturnType<ReturnType<typeof createScanningHandler>>;
  readonly shards: MemoryShards;
  readonly notices: LeakedKey[][];
  readonly logs: ReturnType<typeof captureLogs>;
  readonly fetches: () => number;
}

function arrange(
  options: Partial<Pick<ScanningDependencies, 'action'>> & { keysDocument?: () => Promise<string> } = {},
): Arrangement {
  const shards = memoryShards(initialTexts());
  const logs = captureLogs();
  const notices: LeakedKey[][] = [];
  const publicKeys = new PublicKeyCache({
    fetchDocument: options.keysDocument ?? (() => Promise.resolve(publicKeysDocument([github]))),
    now: () => NOW,
    logger: logs.logger,
  });
  const handle = createScanningHandler({
    publicKeys,
    shards: shards.store,
    logger: logs.logger,
    action: options.action ?? 'revoke',
    keyPrefix: 'pay',
    notify: (leaks) => {
      notices.push([...leaks]);
      return Promise.resolve();
    },
    now: () => NOW,
  });
  return { handle, shards, notices, logs, fetches: () => publicKeys.fetches };
}

const reportOf = (...entries: Record<string, string>[]): string => JSON.stringify(entries);

function storedKeysOf(shards: MemoryShards, appId: string): unknown {
  const text = shards.texts()[shardOf(appId, SHARDS)] ?? '{}';
  return parseKeyDocument(text).get(appId)?.keys;
}

describe('the secret scanning handler, given a signed report', () => {
  it('labels each token by its content and answers with the type it came with, never putting a key in its log lines or its notice', async () => {
    const { handle, logs, notices } = arrange();
    const unknown = generatePrefixedKey('pay');
    const body = reportOf(
      reportEntry(LEAKED, 'payment_api_key'),
      reportEntry(unknown, 'payment_api_key'),
      reportEntry(`pay_${'A'.repeat(38)}`, 'payment_api_key'),
      reportEntry(LEAKED.replace(/^pay_/, 'stg_'), 'staging_key'),
      reportEntry(PLAIN, 'a type that says nothing of ours'),
    );

    const response = await handle(scanningEvent(body, github));

    expect(response.statusCode).toBe(200);
    expect(response.headers).toMatchObject({ 'Content-Type': 'application/json', 'X-Request-Id': 'req-1' });
    expect(JSON.parse(response.body)).toEqual([
      { token_raw: LEAKED, token_type: 'payment_api_key', label: 'true_positive' },
      { token_raw: unknown, token_type: 'payment_api_key', label: 'false_positive' },
      { token_raw: `pay_${'A'.repeat(38)}`, token_type: 'payment_api_key', label: 'false_positive' },
      { token_raw: LEAKED.replace(/^pay_/, 'stg_'), token_type: 'staging_key', label: 'false_positive' },
      { token_raw: PLAIN, token_type: 'a type that says nothing of ours', label: 'true_positive' },
    ]);
    expect(notices.flat().map((leak) => leak.appId)).toEqual(['partner-a', 'partner-b']);
    for (const key of [LEAKED, PLAIN]) {
      expect(logs.lines.join('\n')).not.toContain(key);
      expect(JSON.stringify(notices)).not.toContain(key);
    }
  });

  it('revokes a true positive in its shard with one write: the key expires now, the app keeps its other key', async () => {
    const { handle, shards } = arrange();

    await handle(scanningEvent(reportOf(reportEntry(LEAKED)), github));

    expect(shards.calls.writes).toBe(1);
    expect(storedKeysOf(shards, 'partner-a')).toEqual([
      { stored: toCompactDigestForm(LEAKED), expires: '2026-03-01T12:00:00Z' },
      { stored: toCompactDigestForm(UNTOUCHED) },
    ]);
  });

  it('writes once per shard touched, however many keys of that shard the report holds', async () => {
    const { handle, shards } = arrange();

    await handle(
      scanningEvent(reportOf(reportEntry(LEAKED), reportEntry(UNTOUCHED), reportEntry(LEAKED)), github),
    );

    expect(shards.calls.writes).toBe(1);
    expect(shards.calls.readAll).toBe(1);
  });

  it('revokes once when the same report comes twice: the repeat is a true positive and writes nothing', async () => {
    const { handle, shards, notices } = arrange();
    const event = scanningEvent(reportOf(reportEntry(LEAKED)), github);

    await handle(event);
    const textsAfterFirst = shards.texts();
    const repeat = await handle(event);

    expect(shards.calls.writes).toBe(1);
    expect(shards.texts()).toEqual(textsAfterFirst);
    expect(JSON.parse(repeat.body)).toEqual([
      { token_raw: LEAKED, token_type: 'payment_api_key', label: 'true_positive' },
    ]);
    expect(notices.map((notice) => notice.map((leak) => leak.action))).toEqual([
      ['revoked'],
      ['already_revoked'],
    ]);
  });

  it('only reports with secretScanningAction=report: told, logged, nothing written', async () => {
    const { handle, shards, notices, logs } = arrange({ action: 'report' });

    const response = await handle(scanningEvent(reportOf(reportEntry(PLAIN)), github));

    expect(JSON.parse(response.body)).toEqual([
      { token_raw: PLAIN, token_type: 'payment_api_key', label: 'true_positive' },
    ]);
    expect(shards.calls.writes).toBe(0);
    expect(shards.texts()).toEqual(initialTexts());
    expect(notices).toEqual([
      [
        {
          appId: 'partner-b',
          keyId: keyIdOf(PLAIN),
          shard: shardOf('partner-b', SHARDS),
          action: 'reported',
          url: 'https://github.com/octo-org/octo-repo/blob/abc123/.env',
          source: 'content',
          tokenType: 'payment_api_key',
        },
      ],
    ]);
    expect(logs.entries().filter((entry) => entry.message === 'key_leaked')).toEqual([
      expect.objectContaining({
        level: 'warn',
        appId: 'partner-b',
        keyId: keyIdOf(PLAIN),
        action: 'reported',
      }),
    ]);
  });

  it('reads and writes nothing for a report of false positives only', async () => {
    const { handle, shards, notices } = arrange();

    const response = await handle(
      scanningEvent(reportOf(reportEntry('ghp_notours'), reportEntry(`pay_${'0'.repeat(38)}`)), github),
    );

    expect(response.statusCode).toBe(200);
    expect(shards.calls).toEqual({ readAll: 0, readOne: 0, writes: 0, conflicts: 0 });
    expect(notices).toEqual([]);
  });

  it('writes nothing for a well-formed key of this stack that no shard holds', async () => {
    const { handle, shards } = arrange();

    const response = await handle(scanningEvent(reportOf(reportEntry(generatePrefixedKey('pay'))), github));

    expect(JSON.parse(response.body)).toMatchObject([{ label: 'false_positive' }]);
    expect(shards.calls.readAll).toBe(1);
    expect(shards.calls.writes).toBe(0);
  });

  it('tries again from a fresh read when another writer moved the shard, keeping that writer change', async () => {
    const { handle, shards } = arrange();
    const shard = shardOf('partner-a', SHARDS);
    const other = JSON.parse(shards.texts()[shard] ?? '{}') as Record<string, unknown>;
    shards.raceNextWrite(
      shard,
      JSON.stringify({ ...other, 'partner-new': [toCompactDigestForm(generatePrefixedKey('pay'))] }),
    );

    const response = await handle(scanningEvent(reportOf(reportEntry(LEAKED)), github));

    expect(response.statusCode).toBe(200);
    expect(shards.calls).toMatchObject({ conflicts: 1, readOne: 1, writes: 1 });
    const document = parseKeyDocument(shards.texts()[shard] ?? '{}');
    expect(document.has('partner-new')).toBe(true);
    expect(document.get('partner-a')?.keys[0]).toEqual({
      stored: toCompactDigestForm(LEAKED),
      expires: '2026-03-01T12:00:00Z',
    });
  });

  it('answers 503 when a write fails, after telling the topic the key was not revoked', async () => {
    const { handle, shards, notices, logs } = arrange();
    shards.failWrites(true);

    const response = await handle(scanningEvent(reportOf(reportEntry(LEAKED)), github));

    expect(response.statusCode).toBe(503);
    expect(notices.map((notice) => notice.map((leak) => leak.action))).toEqual([['revoke_failed']]);
    expect(logs.entries().find((entry) => entry.message === 'key_leaked')).toMatchObject({ level: 'error' });
  });

  it('answers 503 when a token not found could be in a shard it could not read, and acts on those it found', async () => {
    const { handle, shards } = arrange();
    shards.failReads(shardOf('partner-b', SHARDS));

    const response = await handle(scanningEvent(reportOf(reportEntry(LEAKED), reportEntry(PLAIN)), github));

    expect(response.statusCode).toBe(503);
    expect(storedKeysOf(shards, 'partner-a')).toMatchObject([{ expires: '2026-03-01T12:00:00Z' }, {}]);
  });
});

describe('the secret scanning handler refuses, and reads and writes nothing,', () => {
  const body = reportOf(reportEntry(LEAKED));

  it.each<[string, (event: Record<string, unknown>) => Record<string, unknown>]>([
    ['an unsigned request', () => scanningEvent(body, undefined)],
    [
      "a signature by a key that is not GitHub's, under GitHub's identifier",
      () =>
        scanningEvent(body, undefined, {
          'Github-Public-Key-Identifier': github.keyIdentifier,
          'Github-Public-Key-Signature': stranger.signatureOf(body),
        }),
    ],
    ['a signature by a key GitHub does not list', () => scanningEvent(body, stranger)],
  ])('for %s: 401', async (_case, makeEvent) => {
    const { handle, shards, notices } = arrange();

    const response = await handle(makeEvent({}));

    expect(response.statusCode).toBe(401);
    expect(JSON.parse(response.body)).toEqual({
      code: 'unauthorized',
      message: 'Missing or invalid GitHub signature.',
    });
    expect(shards.calls).toEqual({ readAll: 0, readOne: 0, writes: 0, conflicts: 0 });
    expect(notices).toEqual([]);
  });

  it('for a body over the limit: 413, before looking up any public key', async () => {
    const { handle, shards, fetches } = arrange();
    const oversize = JSON.stringify([
      { ...reportEntry(LEAKED), url: 'x'.repeat(REPORT_LIMITS.maxBodyBytes) },
    ]);

    const response = await handle(scanningEvent(oversize, github));

    expect(response.statusCode).toBe(413);
    expect(fetches()).toBe(0);
    expect(shards.calls.readAll).toBe(0);
  });

  it('when the public keys URL answers garbage: 503, so GitHub retries', async () => {
    const { handle, shards, logs } = arrange({
      keysDocument: () => Promise.resolve('<html>502 Bad Gateway</html>'),
    });

    const response = await handle(scanningEvent(body, github));

    expect(response.statusCode).toBe(503);
    expect(shards.calls.readAll).toBe(0);
    expect(logs.entries()).toContainEqual(expect.objectContaining({ reason: 'public_keys_unavailable' }));
  });

  it.each([
    ['a signed body that is not JSON', 'not json'],
    ['a signed JSON object instead of a list', '{"token": "x"}'],
    ['a signed entry without a token', '[{"type": "payment_api_key"}]'],
    [
      'a signed list of more tokens than a report may hold',
      JSON.stringify(Array.from({ length: REPORT_LIMITS.maxTokens + 1 }, () => reportEntry('x'))),
    ],
  ])('for %s: 400', async (_case, text) => {
    const { handle, shards } = arrange();

    const response = await handle(scanningEvent(text, github));

    expect(response.statusCode).toBe(400);
    expect(shards.calls.readAll).toBe(0);
  });
});
