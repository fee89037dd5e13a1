/**
 * The HTTP contract of POST /payment, stated again as plainly as possible and independently of the code under
 * test (nothing here imports from lambda/ or shared/): property tests compare the handler and its parsers with it.
 */
import { crc32 } from 'node:zlib';
import { addressModel, inBlockModel } from './network-model';

export interface KeyModel {
  /** The plain key that opens the app. */
  readonly key: string;
  /** Epoch milliseconds from which it no longer does; absent: never. */
  readonly expiresAt?: number;
}

export interface AppModel {
  readonly keys: readonly KeyModel[];
  /** The networks the app may call from; absent: any. An empty list: none. */
  readonly allowedCidrs?: readonly string[];
}

/** App id → what opens it and from where. */
export type KeyringModel = ReadonlyMap<string, AppModel>;

export type ExpectedStatus = 200 | 400 | 401 | 413 | 415 | 503;

export const EXPECTED_CODE: Readonly<Record<ExpectedStatus, string>> = {
  200: 'ok',
  400: 'bad_request',
  401: 'unauthorized',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  503: 'unavailable',
};

/** The contract's body limits, as docs/contract.md states them. */
const MAX_BODY_BYTES = 65_536;
const MAX_NESTING = 64;

/** How deeply a parsed JSON value nests arrays and objects, walked without recursion. */
function nestingOf(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 0]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (typeof item !== 'object' || item === null) continue;
    deepest = Math.max(deepest, depth + 1);
    for (const child of Object.values(item)) pending.push([child, depth + 1]);
  }
  return deepest;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A field of the event, or undefined when the event (or the field) is missing or not an object. */
function fieldOf(value: unknown, name: string): unknown {
  return isRecord(value) && Object.hasOwn(value, name) ? value[name] : undefined;
}

/**
 * The values a header was sent with. Names match in any case. `multiValueHeaders` wins for a name when it says
 * anything about it (a value that is not null, or a non-empty list); otherwise `headers`. Anything that is not
 * a string counts as an empty value.
 */
export function headerValuesModel(event: unknown, name: string): string[] {
  const asText = (value: unknown): string => (typeof value === 'string' ? value : '');
  const entriesNamed = (map: unknown): unknown[] =>
    isRecord(map)
      ? Object.keys(map)
          .filter((key) => key.toLowerCase() === name.toLowerCase())
          .map((key) => map[key])
          .filter((value) => value !== undefined && value !== null)
      : [];
  const fromMulti = entriesNamed(fieldOf(event, 'multiValueHeaders')).flatMap((value) =>
    Array.isArray(value) ? value.map(asText) : [asText(value)],
  );
  if (fromMulti.length > 0) return fromMulti;
  return entriesNamed(fieldOf(event, 'headers')).map(asText);
}

// RFC 9110: media-type = type "/" subtype *( OWS ";" OWS [ token "=" ( token / quoted-string ) ] ), OWS = SP / HTAB.
const OWS = '[ \\t]*';
const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const QUOTED_STRING = '"(?:[\\t \\x21\\x23-\\x5b\\x5d-\\x7e\\x80-\\xff]|\\\\[\\t \\x20-\\x7e\\x80-\\xff])*"';
const PARAMETER = `(${TOKEN})=(${TOKEN}|${QUOTED_STRING})`;
const MEDIA_TYPE = new RegExp(
  `^${OWS}(${TOKEN})/(${TOKEN})((?:${OWS};${OWS}(?:${TOKEN}=(?:${TOKEN}|${QUOTED_STRING}))?)*)${OWS}$`,
);

export interface MediaTypeModel {
  readonly type: string;
  readonly subtype: string;
  readonly parameters: readonly { readonly name: string; readonly value: string }[];
}

export function mediaTypeModel(value: string): MediaTypeModel | undefined {
  const match = MEDIA_TYPE.exec(value);
  if (match === null) return undefined;
  const [, type = '', subtype = '', rest = ''] = match;
  const parameters = [...rest.matchAll(new RegExp(`;${OWS}${PARAMETER}`, 'g'))].map(
    ([, name = '', raw = '']) => ({
      name: name.toLowerCase(),
      value: raw.startsWith('"') ? raw.slice(1, -1).replace(/\\(.)/gs, '$1') : raw,
    }),
  );
  return { type: type.toLowerCase(), subtype: subtype.toLowerCase(), parameters };
}

/** Exactly one Content-Type, `application/json` in any case, and any charset parameter says utf-8. */
export function isJsonContentTypeModel(values: readonly string[]): boolean {
  if (values.length !== 1) return false;
  const mediaType = mediaTypeModel(values[0] ?? '');
  return (
    mediaType !== undefined &&
    mediaType.type === 'application' &&
    mediaType.subtype === 'json' &&
    mediaType.parameters.every(({ name, value }) => name !== 'charset' || value.toLowerCase() === 'utf-8')
  );
}

export type BodyModel = 'empty' | 'json' | 'refused' | 'tooLarge';

/**
 * Absent or null: empty. Not a string: refused. Over 64 KiB as sent (the decoded bytes of base64, or base64 text
 * longer than any encoding of 64 KiB): too large. Base64 (only when isBase64Encoded is the boolean true) must be padded standard base64 of valid UTF-8; plain text
 * must be well-formed UTF-16. One leading BOM is dropped; then only JSON whitespace is empty, and anything else must
 * be one JSON text nested at most 64 deep.
 */
export function bodyModel(body: unknown, isBase64Encoded: unknown): BodyModel {
  if (body === undefined || body === null) return 'empty';
  if (typeof body !== 'string') return 'refused';
  let text = body;
  if (isBase64Encoded === true) {
    // Longer than any base64 of 64 KiB: too large, whatever it holds. Otherwise judged as base64 first.
    if (body.length > Math.ceil(MAX_BODY_BYTES / 3) * 4) return 'tooLarge';
    if (body.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(body)) return 'refused';
    const bytes = Buffer.from(body, 'base64');
    if (bytes.length > MAX_BODY_BYTES) return 'tooLarge';
    text = bytes.toString('utf8');
    // Invalid UTF-8 decodes to U+FFFD, which does not encode back to the same bytes.
    if (!Buffer.from(text, 'utf8').equals(bytes)) return 'refused';
  } else if (Buffer.byteLength(text, 'utf8') > MAX_BODY_BYTES) {
    return 'tooLarge';
  } else if (Buffer.from(text, 'utf8').toString('utf8') !== text) {
    return 'refused'; // a lone surrogate: it cannot be encoded
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  if (/^[ \t\n\r]*$/.test(text)) return 'empty';
  try {
    return nestingOf(JSON.parse(text)) > MAX_NESTING ? 'refused' : 'json';
  } catch {
    return 'refused';
  }
}

/** The request id a response echoes: a string of 1 to 128 visible ASCII characters, or none. */
export function requestIdModel(event: unknown): string | undefined {
  const requestId = fieldOf(fieldOf(event, 'requestContext'), 'requestId');
  return typeof requestId === 'string' && /^[\x21-\x7e]{1,128}$/.test(requestId) ? requestId : undefined;
}

/** The caller's address API Gateway reports (`requestContext.identity.sourceIp`), when it is text. */
export function sourceIpModel(event: unknown): string | undefined {
  const sourceIp = fieldOf(fieldOf(fieldOf(event, 'requestContext'), 'identity'), 'sourceIp');
  return typeof sourceIp === 'string' ? sourceIp : undefined;
}

/** No allowlist: any caller. Otherwise the caller's address, read as an IP address, must lie in one of its blocks. */
export function sourceAllowedModel(
  sourceIp: string | undefined,
  allowedCidrs: readonly string[] | undefined,
): boolean {
  if (allowedCidrs === undefined) return true;
  const address = sourceIp === undefined ? undefined : addressModel(sourceIp);
  return address !== undefined && allowedCidrs.some((cidr) => inBlockModel(address, cidr));
}

/**
 * Whether the key opens the app for this request: it is one of the app's keys, it has not expired by the clock of
 * the request (`expiresAt` itself is already too late), and the caller's network is allowed.
 */
export function keyAcceptedModel(
  app: AppModel | undefined,
  appKey: string,
  now: number,
  sourceIp: string | undefined,
): boolean {
  const key = app?.keys.find((candidate) => candidate.key === appKey);
  if (app === undefined || key === undefined) return false;
  if (key.expiresAt !== undefined && key.expiresAt <= now) return false;
  return sourceAllowedModel(sourceIp, app.allowedCidrs);
}

/**
 * An App-id no app can have (docs/keys.md): outside 1 to 64 of letters, digits, `.`, `_`, `-` starting with a
 * letter or digit; starting with `payk_` in any case; a prefix, `_` and 38 letters and digits; or 32 or more
 * letters and digits alone.
 */
export function impossibleAppIdModel(appId: string): boolean {
  return (
    !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(appId) ||
    appId.slice(0, 5).toLowerCase() === 'payk_' ||
    /^[a-z0-9_]{2,16}_[0-9a-z]{38}$/i.test(appId) ||
    /^[A-Za-z0-9]{32,}$/.test(appId)
  );
}

const BASE62_MODEL = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** A key that starts with the default prefix `pay_` but is not `pay_` + 32 base62 + their CRC32 in 6 base62. */
export function malformedKeyModel(appKey: string): boolean {
  if (!appKey.startsWith('pay_')) return false;
  const match = /^pay_([0-9A-Za-z]{32})([0-9A-Za-z]{6})$/.exec(appKey);
  if (match === null) return true;
  let value = crc32(Buffer.from(match[1] ?? '', 'ascii'));
  let digits = '';
  for (let digit = 0; digit < 6; digit++) {
    digits = BASE62_MODEL.charAt(value % 62) + digits;
    value = Math.floor(value / 62);
  }
  return digits !== match[2];
}

/**
 * The status the contract gives: credentials first (exactly one non-empty App-id and App-key, an App-id some app
 * could have, a key that is not malformed for the prefix; the key must be one of that app's, unexpired at `now`, sent from a network the app allows), 503 if the keys cannot be read,
 * then the media type, then the body.
 */
export function expectedStatus(
  event: unknown,
  keyring: KeyringModel,
  keysReadable: boolean,
  now: number,
): ExpectedStatus {
  const appIds = headerValuesModel(event, 'App-Id');
  const appKeys = headerValuesModel(event, 'App-Key');
  const [appId = '', appKey = ''] = [appIds[0], appKeys[0]];
  if (appIds.length !== 1 || appKeys.length !== 1 || appId === '' || appKey === '') return 401;
  // Refused before any lookup, so whether the keys can be read does not matter.
  if (impossibleAppIdModel(appId) || malformedKeyModel(appKey)) return 401;
  if (!keysReadable) return 503;
  if (!keyAcceptedModel(keyring.get(appId), appKey, now, sourceIpModel(event))) return 401;
  if (!isJsonContentTypeModel(headerValuesModel(event, 'Content-Type'))) return 415;
  const body = bodyModel(fieldOf(event, 'body'), fieldOf(event, 'isBase64Encoded'));
  if (body === 'tooLarge') return 413;
  if (body === 'refused') return 400;
  return 200;
}

/** Headers every response carries, plus the 401 challenge and the echoed request id. */
export function expectedHeaders(
  status: ExpectedStatus,
  requestId: string | undefined,
): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...(status === 401 ? { 'WWW-Authenticate': 'App-key realm="payment-api"' } : {}),
    ...(requestId === undefined ? {} : { 'X-Request-Id': requestId }),
  };
}
