/** What is wrong with the secret's text as a whole, phrased to follow "the secret". */
export type SecretTextProblem = 'is not valid JSON' | 'must be a JSON object mapping App-id to keys';

/** One member of the secret's JSON object. */
export interface SecretEntry {
  /**
   * 1-based position of the member in the text as written, which is what an operator counts to find it. For a
   * name written twice, JSON.parse keeps the last value, so this is the position of the last one.
   */
  readonly position: number;
  readonly name: string;
  readonly value: unknown;
}

export type SecretObjectReading =
  | { readonly ok: true; readonly entries: readonly SecretEntry[] }
  | { readonly ok: false; readonly problem: SecretTextProblem };

/** A JSON string token (optionally the `:` that makes it a member name), or a bracket: all that depth needs. */
const STRUCTURE_TOKEN = /("(?:[^"\\]|\\.)*")([ \t\n\r]*:)?|[{}[\]]/g;

/**
 * The top-level member names of a valid JSON object text, in the order written. Object.entries cannot give
 * that: it lists integer-like names ("42") first, so positions would not match the text for apps named by
 * number. `text` must already have parsed as a JSON object.
 */
export function memberNamesInTextOrder(text: string): string[] {
  const names: string[] = [];
  let depth = 0;
  for (const match of text.matchAll(STRUCTURE_TOKEN)) {
    const [token, quoted, colon] = match;
    if (quoted === undefined) {
      depth += token === '{' || token === '[' ? 1 : -1;
    } else if (depth === 1 && colon !== undefined) {
      names.push(JSON.parse(quoted) as string);
    }
  }
  return names;
}

export type SecretMembersReading =
  | { readonly ok: true; readonly members: Readonly<Record<string, unknown>> }
  | { readonly ok: false; readonly problem: SecretTextProblem };

/**
 * The secret's text as a JSON object, its members by name (JSON.parse keeps the last value of a name written
 * twice). Never passes on JSON.parse's own message: it quotes the input, which holds keys.
 */
export function readSecretMembers(text: string): SecretMembersReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: 'must be a JSON object mapping App-id to keys' };
  }
  return { ok: true, members: parsed as Readonly<Record<string, unknown>> };
}

/**
 * Each member name's 1-based position in the text (of its last occurrence, the one JSON.parse keeps). A scan of
 * the whole text: readers that need a position only for a malformed entry ask for it then.
 */
export function memberPositions(text: string): ReadonlyMap<string, number> {
  const lastPosition = new Map<string, number>();
  memberNamesInTextOrder(text).forEach((name, index) => {
    lastPosition.set(name, index + 1);
  });
  return lastPosition;
}

/** Reads the secret's text as a JSON object's entries, in the order written. */
export function readSecretObject(text: string): SecretObjectReading {
  const reading = readSecretMembers(text);
  if (!reading.ok) return reading;
  const positions = memberPositions(text);
  const entries = Object.entries(reading.members).map(([name, value]) => ({
    // Every parsed name was found in the text; 0 only if that ever failed, so an entry is never dropped.
    position: positions.get(name) ?? 0,
    name,
    value,
  }));
  return { ok: true, entries: entries.sort((a, b) => a.position - b.position) };
}
