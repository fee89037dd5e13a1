import { KEY_IN_TEXT_SOURCE } from '../../shared/keys/key-format';

/** Text in, the same text with every trace of the known secrets replaced by REDACTED. */
export type SecretMask = (text: string) => string;

export const REDACTED = '<redacted>';

/**
 * A run of this many characters of a secret is masked wherever it appears: a server may echo part of a key (cut,
 * split, wrapped in other text), and a part this long is still worth guessing the rest from. Shorter runs are
 * left, or any text would lose its common letters.
 */
export const MIN_MASKED_RUN = 16;

/** Legacy keys (`payk_…`) and keys of the format, whatever their prefix. */
const GENERATED_KEY_SHAPE = new RegExp(KEY_IN_TEXT_SOURCE, 'gi');

type Range = readonly [start: number, end: number];

/** Lower-cases ASCII letters only, so every index still points at the same character of the original. */
function asciiLowerCase(text: string): string {
  return text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
}

/**
 * Where in `text` a run of at least `minRun` characters of `secret` appears. Right to left, `run[j]` is the
 * length of the common run starting at text[i] and secret[j] (the longest common substring table, one row kept).
 */
function runsOf(text: string, secret: string, minRun: number): Range[] {
  const ranges: Range[] = [];
  let run = new Array<number>(secret.length + 1).fill(0);
  let runAfter = new Array<number>(secret.length + 1).fill(0);
  for (let i = text.length - 1; i >= 0; i--) {
    let longest = 0;
    for (let j = secret.length - 1; j >= 0; j--) {
      const length = text[i] === secret[j] ? 1 + (runAfter[j + 1] ?? 0) : 0;
      run[j] = length;
      if (length > longest) longest = length;
    }
    if (longest >= minRun) ranges.push([i, i + longest]);
    [run, runAfter] = [runAfter, run];
  }
  return ranges;
}

function merged(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const result: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = result[result.length - 1];
    if (last !== undefined && start <= last[1]) last[1] = Math.max(last[1], end);
    else result.push([start, end]);
  }
  return result;
}

/**
 * The mask for `secrets`: each is found case-insensitively, as written and as JSON escapes it, whole or as any
 * run of MIN_MASKED_RUN or more of its characters; anything shaped like a generated key goes too. Apply it to
 * whole text before anything shortens it: a cut can leave most of a key standing where it no longer matches.
 */
export function createSecretMask(secrets: readonly string[]): SecretMask {
  const forms = [
    ...new Set(
      secrets
        .filter((secret) => secret !== '')
        .flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)])
        .map(asciiLowerCase),
    ),
  ];
  return (text) => {
    const lower = asciiLowerCase(text);
    const ranges: Range[] = forms.flatMap((form) =>
      runsOf(lower, form, Math.min(MIN_MASKED_RUN, form.length)),
    );
    for (const match of text.matchAll(GENERATED_KEY_SHAPE)) {
      ranges.push([match.index, match.index + match[0].length]);
    }
    let masked = '';
    let position = 0;
    for (const [start, end] of merged(ranges)) {
      masked += text.slice(position, start) + REDACTED;
      position = end;
    }
    return masked + text.slice(position);
  };
}
