// @ts-check
/**
 * A secretlint rule for payment-api keys: `<prefix>_<32 base62><6 base62 CRC32>` (docs/security.md).
 *
 * A regular expression finds candidates; a candidate is reported only when its last 6 characters are the CRC32
 * (IEEE 802.3, as zlib computes it) of the 32 before them, written in base62 (0-9A-Za-z), most significant digit
 * first. A regular expression alone cannot check a CRC32: this is what keeps a string that only looks like a key
 * (a wrong checksum, one character short, no prefix) from being reported. Standalone on purpose (no import from the
 * project's TypeScript), so another repository can copy this folder; a test holds it to shared/keys/key-format.ts.
 *
 * Options:
 * - `prefixes`: the stack prefixes to look for (2 to 16 of a-z, 0-9, _). Default: any prefix.
 * - `allows`: exact strings never reported (the documented example key, which is not random).
 */

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** @type {Uint32Array} */
const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let byte = 0; byte < 256; byte++) {
    let value = byte;
    for (let bit = 0; bit < 8; bit++) value = value & 1 ? 0xedb88320 ^ (value >>> 1) : value >>> 1;
    table[byte] = value >>> 0;
  }
  return table;
})();

/** @param {string} text ASCII */
export function crc32(text) {
  let crc = 0xffffffff;
  for (let index = 0; index < text.length; index++) {
    crc = (CRC_TABLE[(crc ^ text.charCodeAt(index)) & 0xff] ?? 0) ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** @param {string} randomPart the 32 base62 characters */
export function checksumOf(randomPart) {
  let value = crc32(randomPart);
  let text = '';
  for (let digit = 0; digit < 6; digit++) {
    text = BASE62.charAt(value % 62) + text;
    value = Math.floor(value / 62);
  }
  return text;
}

const PREFIX_PATTERN = /^[a-z0-9_]{2,16}$/;

/**
 * A key stands alone: not preceded by a character a prefix could hold, not followed by one of the body.
 * @param {readonly string[] | undefined} prefixes
 */
function candidatePattern(prefixes) {
  const prefix =
    prefixes === undefined
      ? '[a-z0-9_]{2,16}'
      : `(?:${prefixes.map((value) => value.replace(/_/g, '\\_')).join('|')})`;
  return new RegExp(`(?<![0-9A-Za-z])${prefix}_([0-9A-Za-z]{32})([0-9A-Za-z]{6})(?![0-9A-Za-z])`, 'g');
}

export const messages = {
  KEY: {
    en: () => 'found a payment-api key with a valid checksum: revoke it (docs/operations.md, a key leaked)',
  },
};

/** @type {import('@secretlint/types').SecretLintRuleCreator<{ prefixes?: string[]; allows?: string[] }>} */
export const creator = {
  messages,
  meta: {
    id: 'secretlint-rule-payment-api-key',
    recommended: true,
    type: 'scanner',
    supportedContentTypes: ['text'],
    docs: { url: 'https://github.com/payment-api/payment-api/blob/main/docs/security.md#the-key-format' },
  },
  create(context, options) {
    const t = context.createTranslator(messages);
    const prefixes = options.prefixes;
    for (const prefix of prefixes ?? []) {
      if (!PREFIX_PATTERN.test(prefix)) {
        throw new Error(
          `secretlint-rule-payment-api-key: prefix "${prefix}" is not 2 to 16 of a-z, 0-9 and _`,
        );
      }
    }
    const allows = new Set(options.allows ?? []);
    return {
      file(source) {
        for (const match of source.content.matchAll(candidatePattern(prefixes))) {
          const [key, randomPart = '', checksum = ''] = match;
          if (checksumOf(randomPart) !== checksum || allows.has(key)) continue;
          const start = match.index;
          context.report({
            message: t('KEY'),
            range: [start, start + key.length],
          });
        }
      },
    };
  },
};
