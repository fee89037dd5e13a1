import { byCodeUnit, keyIdOf, type DocumentApp, type KeyDocument } from '../../shared/keys/key-document';
import { keyShape } from '../../shared/keys/key-format';
import {
  isDigestForm,
  matchDigest,
  matchDigestOf,
  MAX_KEY_LENGTH,
  MIN_KEY_LENGTH,
  readStoredKey,
} from '../../shared/keys/key-material';
import { expireKeysByDigest, findKeysByDigest } from '../../shared/keys/leaked-key';
import { formatTimestamp } from '../../shared/keys/timestamp';
import { after, newKeyChange, type FreshKey } from './changes';
import type { AppEdit, Change } from './engine';

/**
 * `keys leaked`, the pure part. The keys come from standard input, one a line, never from the command line; each is
 * turned into its 16-byte match digest at once and its text goes no further, so nothing after parseLeakedInput can
 * print it (a problem names the line and never repeats it). Then: where each leaked key is (every shard, every
 * stored form, by its match digest, through shared/keys/leaked-key.ts as the secret scanning function finds them),
 * and the edits that end them, one per app and shard, for the engine to write in one compare-and-swap per shard.
 *
 * A key is ended by expiring it (at once, or after --rotate's grace) rather than by removing it: the app keeps its
 * allowlist, its rate limit and its other keys, even when this was its only key (rotate can give it a new one);
 * `list` shows the key as expired until prune; and a second run finds it ended and writes nothing.
 */

/** One distinct key of the input: the line it was first on, and what it is looked up by. */
export interface LeakedKey {
  /** 1-based. */
  readonly line: number;
  /** matchDigestOf(key): the first 16 bytes of its SHA-256. */
  readonly digest: Buffer;
}

export interface LeakedInput {
  readonly keys: readonly LeakedKey[];
  /** Lines that repeat an earlier line's key: each such line, and the line it repeats. */
  readonly repeats: readonly { readonly line: number; readonly sameAs: number }[];
}

export type LeakedInputReading =
  { readonly ok: true; readonly input: LeakedInput } | { readonly ok: false; readonly problem: string };

/** Bytes a key may hold: visible ASCII. Spaces and tabs around a key are taken off; inside one, refused. */
function isVisibleAscii(byte: number): boolean {
  return byte >= 0x21 && byte <= 0x7e;
}

/** Why one line (trimmed, not empty) cannot be a key of this registry; undefined when it can. Never quotes it. */
function lineProblem(bytes: Buffer, prefix: string): string | undefined {
  if (!bytes.every(isVisibleAscii)) {
    return 'holds a character no key has (a key is visible ASCII, with no space inside)';
  }
  const text = bytes.toString('latin1');
  if (isDigestForm(text))
    return 'is a stored digest (sha256: or d:), not a key: give the leaked keys themselves';
  if (text.length < MIN_KEY_LENGTH || text.length > MAX_KEY_LENGTH) {
    return `is not a key: a key is ${MIN_KEY_LENGTH} to ${MAX_KEY_LENGTH} characters`;
  }
  if (keyShape(text, prefix) === 'malformed') {
    return (
      `starts with ${prefix}_ but is not a whole key (38 characters of 0-9, A-Z and a-z after it, the last 6 a ` +
      'checksum): cut short, run on, or split across lines?'
    );
  }
  return undefined;
}

/**
 * Reads the keys of `bytes`: one a line (LF or CRLF), blank lines skipped, spaces and tabs around a key taken off, a
 * key repeated looked up once. `prefix`: the registry's, so that a key with its prefix but a broken checksum (a
 * typo, or a key split across two lines) is refused rather than reported as not found. The first bad line refuses
 * the whole input, with how many more there are.
 */
export function parseLeakedInput(bytes: Buffer, prefix: string): LeakedInputReading {
  const keys: LeakedKey[] = [];
  const repeats: { line: number; sameAs: number }[] = [];
  const firstLineOf = new Map<string, number>();
  let firstProblem: string | undefined;
  let problems = 0;
  for (const { line, content } of trimmedLines(bytes)) {
    const problem = lineProblem(content, prefix);
    if (problem !== undefined) {
      problems++;
      firstProblem ??= `line ${line} of standard input ${problem}`;
      continue;
    }
    const digest = matchDigestOf(content.toString('latin1'));
    const seen = digest.toString('hex');
    const sameAs = firstLineOf.get(seen);
    if (sameAs === undefined) {
      firstLineOf.set(seen, line);
      keys.push({ line, digest });
    } else {
      repeats.push({ line, sameAs });
    }
  }
  return verdict({ keys, repeats }, firstProblem, problems);
}

/** The lines of `bytes` that hold anything, each without the spaces, tabs and CR around it. */
function* trimmedLines(bytes: Buffer): Generator<{ line: number; content: Buffer }> {
  let start = 0;
  for (let line = 1; start <= bytes.length; line++) {
    const newline = bytes.indexOf(0x0a, start);
    const end = newline === -1 ? bytes.length : newline;
    let from = start;
    let to = end;
    while (from < to && [0x20, 0x09].includes(bytes[from] ?? 0)) from++;
    while (to > from && [0x20, 0x09, 0x0d].includes(bytes[to - 1] ?? 0)) to--;
    start = end + 1;
    if (from < to) yield { line, content: bytes.subarray(from, to) };
  }
}

function verdict(input: LeakedInput, firstProblem: string | undefined, problems: number): LeakedInputReading {
  if (firstProblem !== undefined) {
    const more = problems > 1 ? ` (and ${problems - 1} more line${problems === 2 ? '' : 's'} refused)` : '';
    return { ok: false, problem: `${firstProblem}${more}; nothing was looked up or written` };
  }
  if (input.keys.length === 0) {
    return {
      ok: false,
      problem:
        'no key on standard input: give the leaked keys one per line, for example ' +
        'pbpaste | npm run -s keys -- leaked --stack <name>',
    };
  }
  return { ok: true, input };
}

export type LeakedAction =
  { readonly kind: 'revoke' } | { readonly kind: 'rotate'; readonly graceMs: number };

/** Where one leaked key is stored. */
export interface Sighting {
  readonly shard: number;
  readonly appId: string;
  /** The id `list` shows for the entry. */
  readonly keyId: string;
}

/**
 * Every sighting of each key, by the key's line. Each entry of every shard is read once into an index (its match
 * digest → where it is), so that 100 keys against 10,000 apps cost one pass, not 100; each candidate is then
 * confirmed, in constant time, by findKeysByDigest over that one app.
 */
export function findLeakedKeys(
  documents: ReadonlyMap<number, KeyDocument>,
  keys: readonly LeakedKey[],
): Map<number, Sighting[]> {
  const wanted = new Set(keys.map((key) => key.digest.toString('hex')));
  // By match digest: each app (in each shard) that stores one, once.
  const holders = new Map<string, Map<string, { shard: number; appId: string; app: DocumentApp }>>();
  for (const [shard, document] of [...documents].sort(([a], [b]) => a - b)) {
    for (const [appId, app] of document) {
      for (const key of app.keys) {
        const reading = readStoredKey(key.stored);
        const hex = reading.ok ? matchDigest(reading.digest).toString('hex') : '';
        if (!wanted.has(hex)) continue;
        if (!holders.has(hex)) holders.set(hex, new Map());
        holders.get(hex)?.set(`${shard}\0${appId}`, { shard, appId, app });
      }
    }
  }
  return new Map(
    keys.map((key) => {
      const candidates = [...(holders.get(key.digest.toString('hex'))?.values() ?? [])];
      const sightings = candidates.flatMap(({ shard, appId, app }) =>
        findKeysByDigest(new Map([[appId, app]]), key.digest).map(({ keyId }) => ({ shard, appId, keyId })),
      );
      return [key.line, sightings];
    }),
  );
}

/** What an app's edit did to one of its leaked keys. */
export interface KeyOutcome {
  /** The key's input line. */
  readonly line: number;
  readonly keyIds: readonly string[];
  /**
   * `ended`: it now expires at `endsAt` (by now, or after the grace); `already-ended`: it already expired by then,
   * nothing written for it; `gone`: on a retry, another writer had removed it.
   */
  readonly status: 'ended' | 'already-ended' | 'gone';
}

export interface LeakedAppResult {
  readonly appId: string;
  readonly keys: readonly KeyOutcome[];
  /** When the leaked keys end, as written. */
  readonly endsAt: string;
  /** --rotate: the app's new key, stored by this edit (or by our own earlier attempt). */
  readonly fresh?: FreshKey;
}

/**
 * One app's edit: each leaked key of the app expires at `endsAt` (now, or after the grace), unless it already does by
 * then; with --rotate, the app also gets its new key, but only when a leaked key was ended by this edit, so that a
 * second run hands out no second key. The new key is made once, outside the change, so every retry stores the same
 * one, and a document that already holds it means our own earlier attempt landed. Idempotent.
 */
export function leakedChange(
  appId: string,
  keys: readonly LeakedKey[],
  endsAt: number,
  now: number,
  fresh: FreshKey | undefined,
): Change<LeakedAppResult> {
  return (document, context) => {
    const { document: ended, changed, outcomes } = endKeys(document, keys, endsAt);
    const holdsFresh =
      fresh !== undefined &&
      (ended.get(appId)?.keys ?? []).some((key) => keyIdOf(key.stored) === fresh.keyId);
    const addFresh = fresh !== undefined && changed && !holdsFresh;
    const next = addFresh
      ? (newKeyChange({ command: 'rotate', appId, fresh, now })(ended, context).next ?? ended)
      : ended;
    const handedOut = fresh !== undefined && (holdsFresh || changed);
    return {
      next: changed ? next : undefined,
      result: {
        appId,
        keys: outcomes,
        endsAt: formatTimestamp(endsAt),
        ...(handedOut ? { fresh } : {}),
      },
    };
  };
}

/** Each leaked key of `document` expires at `endsAt`, unless it already does by then. */
function endKeys(
  document: KeyDocument,
  keys: readonly LeakedKey[],
  endsAt: number,
): { document: KeyDocument; changed: boolean; outcomes: KeyOutcome[] } {
  let current = document;
  let changed = false;
  const outcomes: KeyOutcome[] = [];
  for (const key of keys) {
    const edit = expireKeysByDigest(current, key.digest, endsAt);
    current = edit.document;
    changed ||= edit.changed;
    const keyIds = edit.found.map((location) => location.keyId);
    const status = edit.found.length === 0 ? 'gone' : edit.changed ? 'ended' : 'already-ended';
    outcomes.push({ line: key.line, keyIds, status });
  }
  return { document: current, changed, outcomes };
}

/**
 * The edits that end every key found: one per app and shard (an app's copies in several shards, as a reshard
 * leaves them, are each edited where they are), in shard and app order. `newKey`: --rotate's fresh key for an app,
 * made once per app, so that every copy of it gets the same key.
 */
export function leakedEdits(
  keys: readonly LeakedKey[],
  found: ReadonlyMap<number, readonly Sighting[]>,
  action: LeakedAction,
  now: number,
  newKey: (appId: string) => FreshKey,
): AppEdit<LeakedAppResult>[] {
  const byApp = new Map<string, { shard: number; appId: string; keys: LeakedKey[] }>();
  for (const key of keys) {
    for (const { shard, appId } of found.get(key.line) ?? []) {
      const name = `${shard}\0${appId}`;
      const group = byApp.get(name) ?? { shard, appId, keys: [] };
      if (!group.keys.includes(key)) group.keys.push(key);
      byApp.set(name, group);
    }
  }
  const fresh = new Map<string, FreshKey>();
  // The instant the leaked keys end: now for a revoke, now plus the grace for --rotate, in whole seconds (rounded down).
  const endsAt = after(now, action.kind === 'revoke' ? 0 : action.graceMs);
  return [...byApp.values()]
    .sort((a, b) => a.shard - b.shard || byCodeUnit(a.appId, b.appId))
    .map(({ shard, appId, keys: appKeys }) => {
      if (action.kind === 'rotate' && !fresh.has(appId)) fresh.set(appId, newKey(appId));
      return { appId, shard, change: leakedChange(appId, appKeys, endsAt, now, fresh.get(appId)) };
    });
}
