import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { generatePrefixedKey } from '../../../../shared/keys/key-format';
import { parseKeyDocument, type KeyDocument } from '../../../../shared/keys/key-document';
import { matchDigestOf, toCompactDigestForm, toDigestForm } from '../../../../shared/keys/key-material';
import { freshKey } from '../../../../tools/keys/changes';
import {
  findLeakedKeys,
  leakedChange,
  leakedEdits,
  parseLeakedInput,
  type LeakedKey,
} from '../../../../tools/keys/leaked';
import { MAX_LEAKED_INPUT_BYTES, readCapped } from '../../../../tools/keys/leaked-run';
import { leakedReport, type LeakedReport } from '../../../../tools/keys/output';
import { run } from '../../../../tools/keys/main';
import { decide, digestKeyIdOf, runCli } from '../../../support/keys-cli';
import { keyIdOf } from '../../../../shared/keys/key-document';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const KEY_A = generatePrefixedKey('pay');
const KEY_B = generatePrefixedKey('pay');
/** A key made before the key format: no prefix of this registry's. */
const LEGACY_KEY = 'payk_Q7tZk2WmX9aB4cD8eF1gH3jK5lM6nP0rS2uV4wY7zA9';

const bytes = (text: string): Buffer => Buffer.from(text, 'utf8');

describe('parseLeakedInput', () => {
  it('reads one key a line (LF or CRLF), skips blank lines and the spaces around a key, and drops repeats', () => {
    const reading = parseLeakedInput(bytes(`\n  ${KEY_A}\r\n\n${LEGACY_KEY}\t\n${KEY_A}\n`), 'pay');

    expect(reading).toEqual({
      ok: true,
      input: {
        keys: [
          { line: 2, digest: matchDigestOf(KEY_A) },
          { line: 4, digest: matchDigestOf(LEGACY_KEY) },
        ],
        repeats: [{ line: 5, sameAs: 2 }],
      },
    });
  });

  it.each<[string, string, string]>([
    [
      'binary garbage',
      `${KEY_A}\n\u0000\u0001\u0002garbage\u00ff\n`,
      'line 2 of standard input holds a character no key has (a key is visible ASCII, with no space inside)',
    ],
    [
      'a space inside a line',
      `${KEY_A.slice(0, 20)} ${KEY_A.slice(20)}\n`,
      'line 1 of standard input holds a character no key has (a key is visible ASCII, with no space inside)',
    ],
    [
      'a key with a newline inside (split across two lines)',
      `${KEY_A.slice(0, 25)}\n${KEY_A.slice(25)}\n`,
      'line 1 of standard input starts with pay_ but is not a whole key (38 characters of 0-9, A-Z and a-z after ' +
        'it, the last 6 a checksum): cut short, run on, or split across lines?',
    ],
    [
      'a key of this registry with a broken checksum',
      `${KEY_A.slice(0, -1)}${KEY_A.endsWith('0') ? '1' : '0'}\n`,
      'line 1 of standard input starts with pay_ but is not a whole key (38 characters of 0-9, A-Z and a-z after ' +
        'it, the last 6 a checksum): cut short, run on, or split across lines?',
    ],
    [
      'a stored digest instead of a key',
      `${toCompactDigestForm(KEY_A)}\n${toDigestForm(KEY_B)}\n`,
      'line 1 of standard input is a stored digest (sha256: or d:), not a key: give the leaked keys themselves ' +
        '(and 1 more line refused)',
    ],
    ['a word', 'hello\n', 'line 1 of standard input is not a key: a key is 16 to 512 characters'],
    ['nothing but blank lines', '\n \n\r\n', ''],
  ])('refuses %s in one line that never quotes the input', (_label, text, problem) => {
    const reading = parseLeakedInput(bytes(text), 'pay');

    expect(reading.ok).toBe(false);
    if (reading.ok) return;
    if (problem === '') {
      expect(reading.problem).toMatch(/^no key on standard input: /);
    } else {
      expect(reading.problem).toBe(`${problem}; nothing was looked up or written`);
    }
    expect(reading.problem).not.toContain(KEY_A.slice(4, 14));
    expect(reading.problem).not.toContain(KEY_A.slice(25, 35));
  });

  it("takes a well-formed key of another stack's prefix, or a legacy key, to be looked up as it is", () => {
    const reading = parseLeakedInput(bytes(`${generatePrefixedKey('acme')}\n${LEGACY_KEY}\n`), 'pay');

    expect(reading.ok && reading.input.keys.map((key) => key.line)).toEqual([1, 2]);
  });
});

describe('readCapped', () => {
  it(`stops reading 10 MB of input past ${MAX_LEAKED_INPUT_BYTES} bytes and says so, without reading the rest`, async () => {
    let chunksRead = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    async function* tenMegabytes(): AsyncGenerator<Buffer> {
      for (let sent = 0; sent < 10 * 1024 * 1024; sent += chunk.length) {
        chunksRead++;
        // A chunk at a time, as a pipe delivers them.
        yield await Promise.resolve(chunk);
      }
    }

    const reading = await readCapped(tenMegabytes());

    expect(reading).toEqual({ ok: false, read: MAX_LEAKED_INPUT_BYTES + chunk.length });
    expect(chunksRead).toBe(MAX_LEAKED_INPUT_BYTES / chunk.length + 1);
  });

  it('reads input up to the cap whole, in any chunking', async () => {
    const text = `${KEY_A}\n${KEY_B}\n`;

    expect(await readCapped(Readable.from([text.slice(0, 10), bytes(text.slice(10))]))).toEqual({
      ok: true,
      bytes: bytes(text),
    });
  });
});

const leakedKey = (line: number, key: string): LeakedKey => ({ line, digest: matchDigestOf(key) });

describe('findLeakedKeys and the edits', () => {
  const documents = new Map<number, KeyDocument>([
    [0, parseKeyDocument(JSON.stringify({ shop: [toCompactDigestForm(KEY_A), 'other-key-0123456789'] }))],
    [1, parseKeyDocument(JSON.stringify({ old: [toDigestForm(LEGACY_KEY)], plain: [KEY_B] }))],
    // A reshard's leftover copy of shop in another shard.
    [2, parseKeyDocument(JSON.stringify({ shop: [toCompactDigestForm(KEY_A)] }))],
  ]);

  const keys = [leakedKey(1, KEY_A), leakedKey(2, LEGACY_KEY), leakedKey(3, KEY_B)];

  it('finds each key in every stored form and every shard, by the id list shows', () => {
    const found = findLeakedKeys(documents, keys);

    expect(Object.fromEntries(found)).toEqual({
      1: [
        { shard: 0, appId: 'shop', keyId: digestKeyIdOf(KEY_A) },
        { shard: 2, appId: 'shop', keyId: digestKeyIdOf(KEY_A) },
      ],
      2: [{ shard: 1, appId: 'old', keyId: keyIdOf(LEGACY_KEY) }],
      3: [{ shard: 1, appId: 'plain', keyId: keyIdOf(KEY_B) }],
    });
  });

  it('makes one edit per app and shard, each naming its shard', () => {
    const edits = leakedEdits(keys, findLeakedKeys(documents, keys), { kind: 'revoke' }, NOW, () =>
      freshKey(generatePrefixedKey()),
    );

    expect(edits.map(({ shard, appId }) => [shard, appId])).toEqual([
      [0, 'shop'],
      [1, 'old'],
      [1, 'plain'],
      [2, 'shop'],
    ]);
  });

  it('revokes by expiring the key now, keeps the app and its other keys, and writes nothing the second time', () => {
    const change = leakedChange('shop', [leakedKey(1, KEY_A)], NOW, NOW, undefined);
    const own = new Map([['shop', documents.get(0)?.get('shop') ?? { keys: [] }]]);

    const first = change(own, { isRetry: false });
    const second = change(first.next ?? own, { isRetry: false });

    expect(first.next?.get('shop')?.keys).toEqual([
      { stored: toCompactDigestForm(KEY_A), expires: '2026-06-01T12:00:00Z' },
      { stored: 'other-key-0123456789' },
    ]);
    expect(first.result.keys).toEqual([{ line: 1, keyIds: [digestKeyIdOf(KEY_A)], status: 'ended' }]);
    expect(second.next).toBeUndefined();
    expect(second.result.keys[0]?.status).toBe('already-ended');
  });

  it('--rotate adds the new key once and ends the leaked one after the grace; a second run adds none', () => {
    const fresh = freshKey(generatePrefixedKey());
    const graceEnd = NOW + 86_400_000;
    const own = new Map([['shop', { keys: [{ stored: toCompactDigestForm(KEY_A) }] }]]);
    const change = leakedChange('shop', [leakedKey(1, KEY_A)], graceEnd, NOW, fresh);

    const first = change(own, { isRetry: false });
    const again = leakedChange(
      'shop',
      [leakedKey(1, KEY_A)],
      graceEnd + 60_000,
      NOW + 60_000,
      freshKey(generatePrefixedKey()),
    )(first.next ?? own, { isRetry: false });

    expect(first.next?.get('shop')?.keys).toEqual([
      { stored: toCompactDigestForm(KEY_A), expires: '2026-06-02T12:00:00Z' },
      { stored: fresh.storedKey },
    ]);
    expect(first.result.fresh).toBe(fresh);
    expect(again.next).toBeUndefined();
    expect(again.result.fresh).toBeUndefined();
  });
});

describe('the report', () => {
  const input = {
    keys: [leakedKey(1, KEY_A), leakedKey(3, KEY_B)],
    repeats: [{ line: 2, sameAs: 1 }],
  };
  const found = new Map([
    [1, [{ shard: 4, appId: 'shop', keyId: 'aaaaaaaaaaaa' }]],
    [3, []],
  ]);
  /** Shard 4's write, with shop's one leaked key in it `ended` or `already-ended`. */
  const done = (status: 'ended' | 'already-ended') =>
    new Map([
      [
        4,
        [
          {
            appId: 'shop',
            keys: [{ line: 1, keyIds: ['aaaaaaaaaaaa'], status }],
            endsAt: '2026-06-01T12:00:00Z',
          },
        ],
      ],
    ]);
  const report = (overrides: Partial<LeakedReport> = {}): LeakedReport => ({
    input,
    found,
    outcomes: done('ended'),
    action: { kind: 'revoke' },
    dryRun: false,
    shardCount: 64,
    shardsWritten: 1,
    ...overrides,
  });

  it('says per line the app, key id, shard and action, or that it was not found, then a summary', () => {
    expect(leakedReport(report(), false).text).toBe(
      'line 1: app shop, key aaaaaaaaaaaa, shard 4: revoked (expired at 2026-06-01T12:00:00Z; list shows it until prune)\n' +
        'line 2: the same key as line 1\n' +
        'line 3: not found in any of the 64 shards; nothing written for it\n' +
        '2 keys: 1 found (1 app), 1 not found; 1 shard written\n',
    );
  });

  it('a dry run says what would be done and that nothing was written', () => {
    const { text } = leakedReport(report({ dryRun: true, shardsWritten: 0 }), false);

    expect(text).toContain('shard 4: would revoke (expire at 2026-06-01T12:00:00Z)\n');
    expect(text).toMatch(/; dry run: nothing written\n$/);
  });

  it('--json gives every line and the counts', () => {
    expect(JSON.parse(leakedReport(report(), true).text)).toEqual({
      keys: [
        {
          line: 1,
          found: [
            {
              appId: 'shop',
              keyId: 'aaaaaaaaaaaa',
              shard: 4,
              action: 'revoked',
              expires: '2026-06-01T12:00:00Z',
            },
          ],
        },
        { line: 2, sameAs: 1, found: [] },
        { line: 3, found: [] },
      ],
      summary: { keys: 2, found: 1, notFound: 1, apps: 1, shards: 64, shardsWritten: 1, dryRun: false },
    });
  });

  it.each<[string, Partial<LeakedReport>, number]>([
    ['some not found', {}, 3],
    ['every key found and ended', { input: { keys: [leakedKey(1, KEY_A)], repeats: [] } }, 0],
    [
      'every key found, already ended',
      {
        input: { keys: [leakedKey(1, KEY_A)], repeats: [] },
        outcomes: done('already-ended'),
      },
      0,
    ],
    ['a found key whose shard failed (even with some not found)', { outcomes: new Map([[4, 'boom']]) }, 1],
  ])('exits by what happened: %s', (_label, overrides, code) => {
    expect(leakedReport(report(overrides), false).code).toBe(code);
  });
});

describe('keys leaked on a local registry', () => {
  let directory: string;
  let registryFile: string;

  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), 'keys-leaked-'));
    registryFile = join(directory, 'registry', 'registry.json');
  });

  afterEach(() => {
    rmSync(directory, { recursive: true, force: true });
  });

  const keys = (argv: readonly string[], stdin?: string | Buffer) =>
    runCli(
      [...argv, '--registry-file', registryFile],
      {},
      {
        now: () => NOW,
        ...(stdin === undefined ? {} : { stdin: () => Readable.from([stdin]) }),
      },
    );
  const files = (): string =>
    readdirSync(join(directory, 'registry'))
      .sort()
      .map((name) => readFileSync(join(directory, 'registry', name), 'utf8'))
      .join('\n');
  const keyOf = (stdout: string): string => stdout.split('\n')[0] ?? '';
  const serves = (appId: string, key: string, at = NOW): boolean =>
    [0, 1, 2, 3].some(
      (index) =>
        decide(readFileSync(join(directory, 'registry', `keys-${index}.json`), 'utf8'), appId, key, {
          now: at,
        }).ok,
    );

  /** Four apps (beta and gamma share shard 3): app id → its key. */
  async function seed(): Promise<Record<'alpha' | 'beta' | 'gamma' | 'delta', string>> {
    await keys(['init', '--shards', '4']);
    const made = { alpha: '', beta: '', gamma: '', delta: '' };
    for (const app of ['alpha', 'beta', 'gamma', 'delta'] as const)
      made[app] = keyOf((await keys(['add-app', app])).stdout);
    return made;
  }

  it('revokes every key found, and no other', async () => {
    const made = await seed();
    const leaked = [made.alpha, made.beta, made.gamma].join('\n') + '\n';

    const result = await keys(['leaked'], leaked);

    expect(result.code).toBe(0);
    expect(Object.entries(made).map(([appId, key]) => serves(appId, key))).toEqual([
      false,
      false,
      false,
      true,
    ]);
  });

  it('--dry-run writes nothing', async () => {
    const made = await seed();
    const before = files();

    const result = await keys(['leaked', '--dry-run'], `${made.alpha}\n`);

    expect(result.code).toBe(0);
    expect(files()).toBe(before);
  });

  it('--rotate --grace hands out one new key per app, stored in each copy of it (the report on standard error), and ends the leaked one later', async () => {
    const made = await seed();
    const shardFile = (index: number) => join(directory, 'registry', `keys-${index}.json`);
    // alpha's home is shard 2; shard 0 (empty) gets a copy of it, as a reshard leaves one.
    writeFileSync(shardFile(0), readFileSync(shardFile(2)));

    const result = await keys(['leaked', '--rotate', '--grace', '1d'], `${made.alpha}\n`);

    expect(result.code).toBe(0);
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines).toHaveLength(1);
    const [fresh] = lines;
    expect(fresh).toEqual({ appId: 'alpha', keyId: digestKeyIdOf(fresh?.key ?? ''), key: fresh?.key });
    const rotated = `: rotated: new key ${fresh?.keyId ?? ''}; the leaked key expires at 2026-06-02T12:00:00Z`;
    expect(result.stderr).toMatch(
      new RegExp(`^line 1: app alpha, key [0-9a-f]{12}, shard 0${rotated}$`, 'm'),
    );
    expect(result.stderr).toMatch(
      new RegExp(`^line 1: app alpha, key [0-9a-f]{12}, shard 2${rotated}$`, 'm'),
    );
    expect(result.stderr).not.toContain(made.alpha);
    expect(serves('alpha', made.alpha)).toBe(true);
    expect(serves('alpha', made.alpha, NOW + 86_400_000)).toBe(false);
    for (const index of [0, 2]) {
      const text = readFileSync(shardFile(index), 'utf8');
      expect(decide(text, 'alpha', fresh?.key ?? '', { now: NOW + 86_400_000 }).ok).toBe(true);
    }
  });

  it('--rotate stops when the new keys cannot be handed out, naming each app whose new key was stored, never a key', async () => {
    const made = await seed();
    let stderr = '';
    const closedPipe = {
      write: (_text: string, done?: (error?: Error | null) => void) =>
        done?.(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' })),
      on: () => undefined,
    };

    // delta's home is shard 1, alpha's shard 2: shard 1 is written first, alone.
    const code = await run(['leaked', '--rotate', '--grace', '1d', '--registry-file', registryFile], {
      env: {},
      now: () => NOW,
      stdin: () => Readable.from([`${made.alpha}\n${made.delta}\n`]),
      stdout: closedPipe,
      stderr: { write: (text: string) => (stderr += text) },
    });

    expect(code).toBe(1);
    expect(stderr).toMatch(
      /^line 1: app alpha, key [0-9a-f]{12}, shard 2: NOT ended: not written: an earlier failure stopped the run$/m,
    );
    expect(stderr).toMatch(
      /^error: app delta: its new key ([0-9a-f]{12}) was stored but not handed out \(standard output: EPIPE\); give it one with "keys rotate delta", then "keys revoke delta \1"$/m,
    );
    expect(serves('alpha', made.alpha, NOW + 86_400_000)).toBe(true);
    expect(serves('delta', made.delta, NOW + 86_400_000)).toBe(false);
    for (const key of Object.values(made)) expect(stderr).not.toContain(key);
  });

  it.each<[string, readonly string[], string | Buffer, string]>([
    [
      '10 MB of standard input',
      ['leaked'],
      Buffer.alloc(10 * 1024 * 1024, 0x61),
      'error: standard input is over 1 MiB (1,048,576 bytes), the most leaked reads: give the keys in parts; nothing was looked up or written',
    ],
    [
      '--rotate without --grace',
      ['leaked', '--rotate'],
      '',
      'error: --rotate needs --grace <duration>: how long the leaked key stays valid (0s: not at all)',
    ],
    [
      'a key on the command line',
      ['leaked', KEY_A],
      '',
      'error: usage: leaked [--rotate --grace <duration>] [--dry-run] < keys (one per line)',
    ],
    [
      'an invalid --key-prefix',
      ['leaked', '--key-prefix', 'Not-A-Prefix'],
      '',
      'error: invalid --key-prefix: a key prefix is 2 to 16 characters of a-z, 0-9 and _',
    ],
  ])('refuses %s with one line, exit 2, writing nothing', async (_label, argv, stdin, line) => {
    await seed();
    const before = files();

    const result = await keys(argv, stdin);

    expect(result).toEqual({ code: 2, stdout: '', stderr: `${line}\n` });
    expect(files()).toBe(before);
  });
});
