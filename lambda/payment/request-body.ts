import { BODY_LIMITS } from '../../shared/api/body-limits';

/** The request body as the event carried it, before any judgement. */
export type RequestBody =
  | { readonly kind: 'none' }
  | { readonly kind: 'text'; readonly text: string; readonly isBase64Encoded: boolean }
  /** `body` held something other than a string or null: not a body anyone sent over HTTP. */
  | { readonly kind: 'notText' };

/** Why a body is refused: 413 for `body_too_large`, 400 for the others; for logs. */
export type BodyProblem =
  'body_too_large' | 'not_text' | 'not_base64' | 'not_utf8' | 'not_json' | 'json_too_deep';

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

/** Base64 text of at most `maxBytes` bytes is at most this long (4 characters for every 3 bytes, padded). */
function base64Length(maxBytes: number): number {
  return Math.ceil(maxBytes / 3) * 4;
}

/**
 * Whether the body is over `maxBytes` as sent, decided before anything proportional to its size is allocated: the
 * length alone settles it for text longer than the limit (a UTF-16 unit is at least one UTF-8 byte), so a body of
 * megabytes costs one comparison.
 */
function tooLarge(
  body: { readonly text: string; readonly isBase64Encoded: boolean },
  maxBytes: number,
): boolean {
  if (body.isBase64Encoded) return body.text.length > base64Length(maxBytes);
  return body.text.length > maxBytes || Buffer.byteLength(body.text, 'utf8') > maxBytes;
}

function decodeText(body: { readonly text: string; readonly isBase64Encoded: boolean }): Decoded {
  if (!body.isBase64Encoded) {
    // A string with a lone surrogate cannot have been UTF-8 on the wire.
    return LONE_SURROGATE.test(body.text)
      ? { ok: false, problem: 'not_utf8' }
      : { ok: true, text: body.text };
  }
  if (!isPaddedBase64(body.text)) return { ok: false, problem: 'not_base64' };
  const bytes = Buffer.from(body.text, 'base64');
  // Padding makes the text's length a bound to within 2 bytes; the decoded length is exact.
  if (bytes.length > BODY_LIMITS.maxBytes) return { ok: false, problem: 'body_too_large' };
  try {
    return { ok: true, text: utf8.decode(bytes) };
  } catch {
    return { ok: false, problem: 'not_utf8' };
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

/**
 * Whether arrays and objects nest deeper than `maxDepth`, counting brackets outside strings in one pass that
 * allocates nothing. Exact for JSON; for text that is not JSON its answer does not matter, since JSON.parse refuses
 * that text anyway (400 either way).
 */
function nestsDeeperThan(text: string, maxDepth: number): boolean {
  let depth = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACKET || code === OPEN_BRACE) {
      if (++depth > maxDepth) return true;
    } else if (code === CLOSE_BRACKET || code === CLOSE_BRACE) {
      depth--;
    }
  }
  return false;
}

/**
 * Judges the body against the contract. Over BODY_LIMITS.maxBytes as sent: `body_too_large`, decided first, from
 * the length, before anything is decoded or parsed. Empty: absent, null, zero bytes, or only JSON whitespace.
 * Anything else must be one JSON text (RFC 8259) in UTF-8, nested at most BODY_LIMITS.maxDepth deep; a base64 body
 * (`isBase64Encoded`) is decoded first and must be valid UTF-8. One leading byte-order mark is ignored, as RFC 8259
 * §8.1 allows a parser to do (senders must not add one, but some .NET and PowerShell clients do); the text after it
 * is judged as usual.
 */
export function readJsonBody(body: RequestBody): BodyReading {
  if (body.kind === 'none') return { ok: true, kind: 'empty' };
  if (body.kind === 'notText') return { ok: false, problem: 'not_text' };
  if (tooLarge(body, BODY_LIMITS.maxBytes)) return { ok: false, problem: 'body_too_large' };
  const decoded = decodeText(body);
  if (!decoded.ok) return decoded;
  const text = decoded.text.startsWith(BYTE_ORDER_MARK) ? decoded.text.slice(1) : decoded.text;
  if (JSON_WHITESPACE_ONLY.test(text)) return { ok: true, kind: 'empty' };
  if (nestsDeeperThan(text, BODY_LIMITS.maxDepth)) return { ok: false, problem: 'json_too_deep' };
  try {
    return { ok: true, kind: 'json', value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false, problem: 'not_json' };
  }
}
