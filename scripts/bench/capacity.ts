/**
 * Capacity the docs can promise (docs/keys.md, "How many apps a shard holds"): bytes per app and apps per shard at
 * 80% for three shapes of app id, with one key and with two keys mid-rotation (the older expiring), every key stored as
 * a compact d: digest; then 100,000 apps of `merchant-<uuid>` ids, each with two keys mid-rotation, spread over 512 and
 * 1,024 shards, against the same apps in the previous digest form (sha256:) over 256 shards, the most allowed before.
 * No AWS: the shard texts are what the key CLI writes (serializeKeyDocument), placed by shardOf.
 */
import { randomUUID } from 'node:crypto';
import { serializeKeyDocument, type DocumentApp } from '../../shared/keys/key-document';
import { generateKey, toCompactDigestForm, toDigestForm } from '../../shared/keys/key-material';
import { SECRET_MAX_BYTES, SECRET_WARNING_FILL_PERCENT } from '../../shared/keys/secret-size';
import { shardTexts } from '../../test/support/shards';
import { fmt, median } from './stats';

const EXPIRES = '2026-12-24T00:00:00Z';
const BUDGET = (SECRET_MAX_BYTES * SECRET_WARNING_FILL_PERCENT) / 100;
const APPS = 100_000;
const ID_SETS = 5;

type Digest = (key: string) => string;

const oneKey = (digest: Digest): DocumentApp => ({ keys: [{ stored: digest(generateKey()) }] });
const twoKeysMidRotation = (digest: Digest): DocumentApp => ({
  keys: [{ stored: digest(generateKey()), expires: EXPIRES }, { stored: digest(generateKey()) }],
});

const ID_SHAPES: readonly { readonly name: string; readonly id: (index: number) => string }[] = [
  { name: '12 characters (`partner-0001`)', id: (index) => `partner-${String(index).padStart(4, '0')}` },
  { name: '`merchant-<uuid>` (45)', id: () => `merchant-${randomUUID()}` },
  { name: '64 characters', id: (index) => `m${String(index).padStart(8, '0')}-${'x'.repeat(54)}` },
];

/** Bytes one more app adds to a shard's text, over `count` apps. */
function bytesPerApp(id: (index: number) => string, app: () => DocumentApp, count = 1_000): number {
  const document = new Map(Array.from({ length: count }, (_, index) => [id(index), app()]));
  return (Buffer.byteLength(serializeKeyDocument(document)) - 2) / count;
}

function fills(texts: readonly string[]): number[] {
  return texts.map((text) => (Buffer.byteLength(text) / SECRET_MAX_BYTES) * 100);
}

export function capacityLines(): string[] {
  const lines = [
    'Bytes per app and apps per shard at 80% (52,428 bytes), keys stored as d: digests, compact JSON as the CLI writes:',
    '| app id | one key: bytes | apps at 80% | two keys mid-rotation: bytes | apps at 80% |',
    '|---|---|---|---|---|',
  ];
  for (const shape of ID_SHAPES) {
    const one = bytesPerApp(shape.id, () => oneKey(toCompactDigestForm));
    const two = bytesPerApp(shape.id, () => twoKeysMidRotation(toCompactDigestForm));
    lines.push(
      `| ${shape.name} | ${fmt(one, 1)} | ${Math.floor(BUDGET / one)} | ${fmt(two, 1)} | ${Math.floor(BUDGET / two)} |`,
    );
  }

  lines.push(
    '',
    `${APPS.toLocaleString('en')} apps of merchant-<uuid> ids, each with two keys mid-rotation, ${ID_SETS} sets of ids: ` +
      'the fullest shard of each set, min / median / max over the sets (and the emptiest):',
    '| digest form, shards | bytes per app | mean fill | fullest shard | emptiest | shards over 80% | over 100% |',
    '|---|---|---|---|---|---|---|',
  );
  const cases = [
    { label: 'before: sha256:, 256 shards (the most allowed before)', digest: toDigestForm, shards: 256 },
    { label: 'after: d:, 512 shards', digest: toCompactDigestForm, shards: 512 },
    { label: 'after: d:, 1,024 shards', digest: toCompactDigestForm, shards: 1_024 },
  ];
  for (const { label, digest, shards } of cases) {
    const fullest: number[] = [];
    const emptiest: number[] = [];
    const over80: number[] = [];
    const over100: number[] = [];
    let totalBytes = 0;
    for (let set = 0; set < ID_SETS; set++) {
      const apps = new Map(
        Array.from({ length: APPS }, () => [`merchant-${randomUUID()}`, twoKeysMidRotation(digest)] as const),
      );
      const texts = shardTexts(apps, shards);
      const fill = fills(texts);
      totalBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text) - 2, 0);
      fullest.push(Math.max(...fill));
      emptiest.push(Math.min(...fill));
      over80.push(fill.filter((percent) => percent > SECRET_WARNING_FILL_PERCENT).length);
      over100.push(fill.filter((percent) => percent > 100).length);
    }
    const spread = (values: number[], digits = 1) =>
      `${fmt(Math.min(...values), digits)} / ${fmt(median(values), digits)} / ${fmt(Math.max(...values), digits)}`;
    lines.push(
      `| ${label} | ${fmt(totalBytes / APPS, 1)} | ${fmt((totalBytes / shards / SECRET_MAX_BYTES) * 100, 1)}% | ` +
        `${spread(fullest)}% | ${spread(emptiest)}% | ${spread(over80, 0)} | ${spread(over100, 0)} |`,
    );
  }
  return lines;
}
