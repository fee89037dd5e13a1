import { KEY_PATTERN_SOURCE } from './key-format';
import { GENERATED_KEY_PREFIX } from './key-material';

/**
 * App ids are names operators choose and callers send in the `App-id` header. A narrow alphabet keeps them
 * safe to print in logs and CLI output and unambiguous inside HTTP headers.
 */
export const APP_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const APP_ID_RULE =
  '1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit';

/** Why an app id is refused when it fits the alphabet but starts like a generated key. */
export const GENERATED_KEY_LOOKALIKE_RULE = `must not start with "${GENERATED_KEY_PREFIX}" (in any case), the prefix of generated keys`;

/** From this length on, an id of letters and digits alone is taken for a key. */
export const KEY_SHAPED_MIN_LENGTH = 32;

/** Why an app id is refused when it has the shape of a key of the key format, whatever its prefix. */
export const KEY_FORMAT_SHAPE_RULE =
  'must not look like a key: a prefix, "_" and 38 letters and digits is how keys are made (docs/security.md)';

/** Why an app id is refused when it has the shape of a key without the prefix. */
export const KEY_SHAPE_RULE =
  `must not look like a key: ${KEY_SHAPED_MIN_LENGTH} or more letters and digits with no ".", "_" or "-" ` +
  'is how generated keys look (use a shorter name, or separate its words)';

/** The app a fresh deploy (and a first local run) gets one generated key for. */
export const DEMO_APP_ID = 'demo';

/**
 * A legacy generated key (`payk_` + 43 base64url characters) fits the app id alphabet, so a key pasted where the app id
 * belongs would otherwise be accepted, listed and logged as an app id. Any id starting with the prefix, in any
 * case, is refused: no real app needs it, and a truncated or re-cased key is caught too.
 */
export function looksLikeGeneratedKey(value: string): boolean {
  return value.slice(0, GENERATED_KEY_PREFIX.length).toLowerCase() === GENERATED_KEY_PREFIX;
}

const KEY_FORMAT_SHAPE = new RegExp(`^${KEY_PATTERN_SOURCE}$`, 'i');

/**
 * A key of the key format (`pay_` and 38 letters and digits) fits the app id alphabet too. Any id of that shape is
 * refused, whatever its prefix and checksum, in any case: no sensible app name ends in 38 letters and digits after
 * an underscore, and a re-cased key or one with a typo is caught as well.
 */
export function hasKeyFormatShape(value: string): boolean {
  return KEY_FORMAT_SHAPE.test(value);
}

const LETTERS_AND_DIGITS_ONLY = new RegExp(`^[A-Za-z0-9]{${KEY_SHAPED_MIN_LENGTH},}$`);

/**
 * The shape of the demo key the stack has Secrets Manager generate (48 letters and digits: excludePunctuation),
 * or of any run of 32 or more of its characters: letters and digits alone, 32 or more. No sensible app name is
 * that long without a separator; a 32-hex-digit id (a UUID without its hyphens) is refused too, and should be:
 * it reads as a key in every log.
 */
export function hasKeyShape(value: string): boolean {
  return LETTERS_AND_DIGITS_ONLY.test(value);
}

/**
 * What is wrong with an app id, phrased to follow "invalid app id: "; undefined when it is valid. Never quotes
 * the value: it may be a key pasted in the wrong place.
 */
export function appIdProblem(value: string): string | undefined {
  if (!APP_ID_PATTERN.test(value)) return `must be ${APP_ID_RULE}`;
  if (looksLikeGeneratedKey(value)) return GENERATED_KEY_LOOKALIKE_RULE;
  if (hasKeyFormatShape(value)) return KEY_FORMAT_SHAPE_RULE;
  if (hasKeyShape(value)) return KEY_SHAPE_RULE;
  return undefined;
}

export function isValidAppId(value: string): boolean {
  return appIdProblem(value) === undefined;
}
