import { keyShape } from '../../shared/keys/key-format';
import { isDigestForm, matchDigestOf, MAX_KEY_LENGTH, MIN_KEY_LENGTH } from '../../shared/keys/key-material';

/**
 * What `keys leaked` reads: keys on standard input, one a line, never on the command line. Pure but for
 * readCapped. A key is turned into its 16-byte match digest at once and its text goes no further, so nothing after
 * this module can print it. A problem names the line and never repeats it.
 */

/** The most standard input leaked reads: about 20,000 keys of the key format, far more than any leak report. */
export const MAX_LEAKED_INPUT_BYTES = 1_048_576;

export const MAX_LEAKED_INPUT_TEXT = '1 MiB (1,048,576 bytes)';

export type CappedRead =
  { readonly ok: true; readonly bytes: Buffer } | { readonly ok: false; readonly read: number };

/**
 * Reads `source` to its end, or stops as soon as it holds more than `cap` bytes (the stream is then destroyed, so
 * a writer that goes on gets EPIPE rather than filling memory).
 */
export async function readCapped(
  source: AsyncIterable<Buffer | string>,
  cap: number = MAX_LEAKED_INPUT_BYTES,
): Promise<CappedRead> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of source) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    read += bytes.length;
    if (read > cap) return { ok: false, read };
    chunks.push(bytes);
  }
  return { ok: true, bytes: Buffer.concat(chunks) };
}

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
