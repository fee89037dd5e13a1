/**
 * `Content-Type` as RFC 9110 defines it (§8.3.1, §5.6):
 *
 *   media-type = type "/" subtype parameters
 *   parameters = *( OWS ";" OWS [ parameter ] )
 *   parameter  = parameter-name "=" ( token / quoted-string )
 *
 * OWS is space and horizontal tab only. JavaScript's trim() would also strip NBSP, VT, FF and the Unicode line
 * and paragraph separators, accepting values no HTTP parser should, so nothing here uses it.
 */

export interface MediaTypeParameter {
  /** Lower-cased: parameter names are case-insensitive. */
  readonly name: string;
  /** As sent, with a quoted-string's quotes and escapes removed. */
  readonly value: string;
}

export interface MediaType {
  /** Lower-cased: type and subtype are case-insensitive tokens. */
  readonly type: string;
  readonly subtype: string;
  readonly parameters: readonly MediaTypeParameter[];
}

const SP = 0x20;
const HTAB = 0x09;
const DQUOTE = 0x22;
const BACKSLASH = 0x5c;
const SLASH = 0x2f;
const SEMICOLON = 0x3b;
const EQUALS = 0x3d;

function isOws(code: number): boolean {
  return code === SP || code === HTAB;
}

/** tchar: "!" / "#" / "$" / "%" / "&" / "'" / "*" / "+" / "-" / "." / "^" / "_" / "`" / "|" / "~" / DIGIT / ALPHA */
function isTchar(code: number): boolean {
  return (
    (code >= 0x30 && code <= 0x39) ||
    (code >= 0x41 && code <= 0x5a) ||
    (code >= 0x61 && code <= 0x7a) ||
    "!#$%&'*+-.^_`|~".includes(String.fromCharCode(code))
  );
}

/** qdtext: HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (%x80-FF). */
function isQdtext(code: number): boolean {
  return (
    code === HTAB ||
    code === SP ||
    code === 0x21 ||
    (code >= 0x23 && code <= 0x5b) ||
    (code >= 0x5d && code <= 0x7e) ||
    (code >= 0x80 && code <= 0xff)
  );
}

/** What may follow a backslash in a quoted-pair: HTAB / SP / VCHAR / obs-text. */
function isQuotedPairChar(code: number): boolean {
  return code === HTAB || (code >= 0x20 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);
}

/** A cursor over one field value. A reader that returns undefined has failed the whole value. */
class Scanner {
  private position = 0;

  constructor(private readonly text: string) {}

  atEnd(): boolean {
    return this.position >= this.text.length;
  }

  /** Whether the next character is `code`. */
  isAt(code: number): boolean {
    return this.text.charCodeAt(this.position) === code;
  }

  /** Consumes `code` if it is next. */
  accept(code: number): boolean {
    if (!this.isAt(code)) return false;
    this.position++;
    return true;
  }

  skipOws(): void {
    while (!this.atEnd() && isOws(this.text.charCodeAt(this.position))) this.position++;
  }

  token(): string | undefined {
    const start = this.position;
    while (!this.atEnd() && isTchar(this.text.charCodeAt(this.position))) this.position++;
    return this.position > start ? this.text.slice(start, this.position) : undefined;
  }

  /** The unescaped content of a quoted-string; call it at the opening quote. */
  quotedString(): string | undefined {
    if (!this.accept(DQUOTE)) return undefined;
    let value = '';
    while (!this.atEnd()) {
      const code = this.text.charCodeAt(this.position++);
      if (code === DQUOTE) return value;
      if (code === BACKSLASH) {
        if (this.atEnd() || !isQuotedPairChar(this.text.charCodeAt(this.position))) return undefined;
        value += this.text.charAt(this.position++);
      } else if (isQdtext(code)) {
        value += String.fromCharCode(code);
      } else {
        return undefined;
      }
    }
    return undefined; // no closing quote
  }
}

/** Strips leading and trailing OWS, which RFC 9110 §5.5 excludes from a field value. */
function trimOws(value: string): string {
  let start = 0;
  let end = value.length;
  while (start < end && isOws(value.charCodeAt(start))) start++;
  while (end > start && isOws(value.charCodeAt(end - 1))) end--;
  return value.slice(start, end);
}

/** Parses one Content-Type field value; undefined when it does not match the grammar. */
export function parseMediaType(fieldValue: string): MediaType | undefined {
  const scanner = new Scanner(trimOws(fieldValue));
  const type = scanner.token();
  if (type === undefined || !scanner.accept(SLASH)) return undefined;
  const subtype = scanner.token();
  if (subtype === undefined) return undefined;

  const parameters: MediaTypeParameter[] = [];
  while (!scanner.atEnd()) {
    scanner.skipOws();
    if (!scanner.accept(SEMICOLON)) return undefined;
    scanner.skipOws();
    if (scanner.atEnd() || scanner.isAt(SEMICOLON)) continue; // `[ parameter ]`: a parameter may be left out
    const name = scanner.token();
    if (name === undefined || !scanner.accept(EQUALS)) return undefined;
    const value = scanner.isAt(DQUOTE) ? scanner.quotedString() : scanner.token();
    if (value === undefined) return undefined;
    parameters.push({ name: name.toLowerCase(), value });
  }
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), parameters };
}

/** Why a request's Content-Type is refused (415); for logs. Names no 400 reason uses (`not_json` is the body's). */
export type ContentTypeProblem =
  | 'missing_content_type'
  | 'repeated_content_type'
  | 'malformed_content_type'
  | 'not_application_json'
  | 'charset_not_utf8';

/**
 * Only `application/json` is JSON (any case, any well-formed parameters). A `charset` parameter, which RFC 8259
 * does not define for JSON, must say `utf-8` (any case, quoted or not) if present: a client declaring another
 * charset is telling us its bytes are not the UTF-8 that JSON requires, and is better told so than misread.
 * Missing, sent twice, or malformed: refused.
 */
export function contentTypeProblem(values: readonly string[]): ContentTypeProblem | undefined {
  const [value] = values;
  if (value === undefined) return 'missing_content_type';
  if (values.length > 1) return 'repeated_content_type';
  const mediaType = parseMediaType(value);
  if (mediaType === undefined) return 'malformed_content_type';
  if (mediaType.type !== 'application' || mediaType.subtype !== 'json') return 'not_application_json';
  const charsets = mediaType.parameters.filter((parameter) => parameter.name === 'charset');
  if (charsets.some((charset) => charset.value.toLowerCase() !== 'utf-8')) return 'charset_not_utf8';
  return undefined;
}
