/** What is wrong with the secret's text as a whole, phrased to follow "the secret". */
export type SecretTextProblem = 'is not valid JSON' | 'must be a JSON object mapping App-id to keys';

export type SecretObjectReading =
  | { readonly ok: true; readonly entries: ReadonlyArray<readonly [string, unknown]> }
  | { readonly ok: false; readonly problem: SecretTextProblem };

/**
 * Reads the secret's text as a JSON object's entries. Never passes on JSON.parse's own message: it quotes the
 * input, which holds keys.
 */
export function readSecretObject(text: string): SecretObjectReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: 'must be a JSON object mapping App-id to keys' };
  }
  return { ok: true, entries: Object.entries(parsed) };
}
