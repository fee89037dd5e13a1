/** The request body as the event carried it, before any judgement. */
export type RequestBody =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string; readonly isBase64Encoded: boolean }
  /** `body` held something other than a string or null: not a body anyone sent over HTTP. */
  | { readonly kind: 'notText' };

/** Why a body is refused (400); for logs. */
export type BodyProblem = 'not_text' | 'not_base64' | 'not_utf8' | 'not_json';

export type BodyReading =
  | { readonly ok: true; readonly kind: 'empty' }
  | { readonly ok: true; readonly kind: 'json'; readonly value: unknown }
  | { readonly ok: false; readonly problem: BodyProblem };

/**
 * RFC 4648 §4 with its padding, which is what API Gateway sends for a binary body: the alphabet, at most two
 * `=` at the end, and a length that is a multiple of 4. A single character class, not a repeated group: a group
 * under `*` makes V8's regex engine overflow its stack on a body of a few megabytes.
 */
const BASE64_CHARACTERS = /^[A-Za-z0-9+/]*={0,2}$/;

function isPaddedBase64(text: string): boolean {
  return text.length % 4 === 0 && BASE64_CHARACTERS.test(text);
}

/** RFC 8259 whitespace: space, tab, LF, CR. Not NBSP or the other Unicode spaces that trim() removes. */
const JSON_WHITESPACE_ONLY = /^[ \t\n\r]*$/;

/** In a `u` regex a lone surrogate is `\p{Cs}`; a pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

const BYTE_ORDER_MARK = '\uFEFF';

/** Fatal: invalid UTF-8 throws instead of turning into U+FFFD. ignoreBOM keeps a BOM for the caller to judge. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

type Decoded =
  { readonly ok: true; readonly text: string } | { readonly ok: false; readonly problem: BodyProblem };

function decodeText(body: { readonly text: string; readonly isBase64Encoded: boolean }): Decoded {
  if (!body.isBase64Encoded) {
    // A string with a lone surrogate cannot have been UTF-8 on the wire.
    return LONE_SURROGATE.test(body.text)
      ? { ok: false, problem: 'not_utf8' }
      : { ok: true, text: body.text };
  }
  if (!isPaddedBase64(body.text)) return { ok: false, problem: 'not_base64' };
  try {
    return { ok: true, text: utf8.decode(Buffer.from(body.text, 'base64')) };
  } catch {
    return { ok: false, problem: 'not_utf8' };
  }
}

/**
 * Judges the body against the contract. Empty: absent, null, zero bytes, or only JSON whitespace. Anything
 * else must be one JSON text (RFC 8259) in UTF-8; a base64 body (`isBase64Encoded`) is decoded first and must
 * be valid UTF-8. One leading byte-order mark is ignored, as RFC 8259 §8.1 allows a parser to do (senders must
 * not add one, but some .NET and PowerShell clients do); the text after it is judged as usual.
 */
export function readJsonBody(body: RequestBody): BodyReading {
  if (body.kind === 'none') return { ok: true, kind: 'empty' };
  if (body.kind === 'notText') return { ok: false, problem: 'not_text' };
  const decoded = decodeText(body);
  if (!decoded.ok) return decoded;
  const text = decoded.text.startsWith(BYTE_ORDER_MARK) ? decoded.text.slice(1) : decoded.text;
  if (JSON_WHITESPACE_ONLY.test(text)) return { ok: true, kind: 'empty' };
  try {
    return { ok: true, kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: 'not_json' };
  }
}
