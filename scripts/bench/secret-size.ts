/**
 * How many apps one secret holds (Secrets Manager's 65,536 bytes), per form of entry, as the key CLI and the
 * rotation Lambda write it (compact JSON), and as the previous versions wrote it (indented), and what one
 * authentication costs against the largest secret that fits.
 */
import { authenticate } from '../../shared/keys/authenticate';
import { serializeKeyDocument, type DocumentApp, type KeyDocument } from '../../shared/keys/key-document';
import { generateKey, toDigestForm } from '../../shared/keys/key-material';
import { parseKeyring } from '../../shared/keys/keyring';
import { SECRET_MAX_BYTES } from '../../shared/keys/secret-size';
import { fmt, median } from './stats';

/** App ids as operators write them: 12 characters. */
const appId = (index: number): string => `partner-${String(index).padStart(4, '0')}`;

interface Form {
  readonly name: string;
  readonly app: () => DocumentApp;
}

const EXPIRES = '2026-12-24T00:00:00Z';
const TWO_CIDRS = ['203.0.113.0/24', '2001:db8::/32'];

/**
 * The heaviest form measured: two digests mid-rotation, the old one expiring, and an allowlist of two blocks (the
 * benchmark's events come from 203.0.113.10, inside it). `currentKey` is the plain key of the newer digest.
 */
export function heaviestApp(currentKey: string = generateKey()): DocumentApp {
  return {
    keys: [{ stored: toDigestForm(generateKey()), expires: EXPIRES }, { stored: toDigestForm(currentKey) }],
    allowedCidrs: TWO_CIDRS,
  };
}

const ONE_PLAIN_KEY: Form = { name: 'one plain key', app: () => ({ keys: [{ stored: generateKey() }] }) };

const FORMS: readonly Form[] = [
  ONE_PLAIN_KEY,
  {
    name: 'two plain keys (mid-rotation)',
    app: () => ({ keys: [{ stored: generateKey() }, { stored: generateKey() }] }),
  },
  {
    name: 'two plain keys mid-rotation, the old one expiring (rotate --grace)',
    app: () => ({ keys: [{ stored: generateKey(), expires: EXPIRES }, { stored: generateKey() }] }),
  },
  { name: 'one digest', app: () => ({ keys: [{ stored: toDigestForm(generateKey()) }] }) },
  {
    name: 'one digest and an allowlist of two blocks',
    app: () => ({ keys: [{ stored: toDigestForm(generateKey()) }], allowedCidrs: TWO_CIDRS }),
  },
  {
    name: 'two digests mid-rotation, one expiring, and an allowlist of two blocks',
    app: () => heaviestApp(),
  },
];

function documentOf(form: Form, apps: number): KeyDocument {
  return new Map(Array.from({ length: apps }, (_, index) => [appId(index), form.app()]));
}

/** The format before this version: every app a list, indented by two spaces, a trailing newline. */
function indented(document: KeyDocument): string {
  const plain = Object.fromEntries([...document].map(([id, app]) => [id, app.keys.map((key) => key.stored)]));
  return JSON.stringify(plain, null, 2) + '\n';
}

/** The most apps of one form whose secret stays within the limit. */
function mostApps(form: Form, serialize: (document: KeyDocument) => string): { apps: number; text: string } {
  let fits = { apps: 0, text: '{}' };
  let low = 1;
  let high = 4_000;
  // Keys are random: build one document of `high` apps and take prefixes, so every probe measures the same keys.
  const all = [...documentOf(form, high)];
  while (low <= high) {
    const middle = Math.floor((low + high) / 2);
    const text = serialize(new Map(all.slice(0, middle)));
    if (Buffer.byteLength(text) <= SECRET_MAX_BYTES) {
      fits = { apps: middle, text };
      low = middle + 1;
    } else high = middle - 1;
  }
  return fits;
}

/** Median ns per authenticate() call, after warm-up. */
function authenticationNs(text: string, appIdUsed: string, appKey: string): number {
  const { keyring } = parseKeyring(text);
  const facts = { now: Date.UTC(2026, 11, 1), sourceIp: '203.0.113.9' };
  const samples: number[] = [];
  for (let round = 0; round < 40; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < 2_000; i++) authenticate({ appId: appIdUsed, appKey }, keyring, facts);
    if (round >= 10) samples.push(Number(process.hrtime.bigint() - start) / 2_000);
  }
  return median(samples);
}

export function secretSizeLines(): string[] {
  const lines = [
    `Apps per secret (${SECRET_MAX_BYTES.toLocaleString('en')} bytes), app ids of 12 characters, generated keys (payk_ + 43):`,
    '| form of each app | bytes per app | apps that fit | apps that fit, indented as before |',
    '|---|---|---|---|',
  ];
  for (const form of FORMS) {
    const compact = mostApps(form, serializeKeyDocument);
    const before =
      form.app().allowedCidrs === undefined && !form.app().keys.some((key) => key.expires)
        ? String(mostApps(form, indented).apps)
        : 'not expressible';
    lines.push(
      `| ${form.name} | ${fmt(compact.text.length / compact.apps, 1)} | ${compact.apps} | ${before} |`,
    );
  }

  // The largest secret that fits: apps of one plain key each (the most entries), and one app holding every key
  // that fits (the most comparisons: every request compares as many digests as the largest app has keys).
  const widest = mostApps(ONE_PLAIN_KEY, serializeKeyDocument);
  const firstKey = [...parseKeyring(widest.text).keyring.keys()][0] ?? '';
  const wrongKey = generateKey();
  const deepKeys = Array.from({ length: 2_000 }, () => ({ stored: generateKey() }));
  let deepCount = 0;
  let deepText = '{}';
  for (let count = 1; count <= deepKeys.length; count++) {
    const text = serializeKeyDocument(new Map([['partner-0000', { keys: deepKeys.slice(0, count) }]]));
    if (Buffer.byteLength(text) > SECRET_MAX_BYTES) break;
    deepCount = count;
    deepText = text;
  }
  lines.push('');
  lines.push('authenticate() against the largest secret that fits, median per call:');
  lines.push(
    `- ${widest.apps} apps of one key each (${Buffer.byteLength(widest.text).toLocaleString('en')} bytes): ` +
      `${fmt(authenticationNs(widest.text, firstKey, wrongKey), 0)} ns (a wrong key; the right key takes the same)`,
  );
  lines.push(
    `- one app holding ${deepCount} keys (${Buffer.byteLength(deepText).toLocaleString('en')} bytes): ` +
      `${fmt(authenticationNs(deepText, 'partner-0000', wrongKey), 0)} ns: every request compares as many ` +
      'digests as the largest app has keys, so one app with many keys slows every request',
  );
  return lines;
}
