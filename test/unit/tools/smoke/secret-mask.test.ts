import { createSecretMask, MIN_MASKED_RUN, REDACTED } from '../../../../tools/smoke/secret-mask';
import { generateKey } from '../../../../shared/keys/key-material';

const KEY = 'Q7tZk2WmX9aB4cD8eF1gH3jK5lM6nP0rS2uV4wY7zA9bC1dE';
const mask = createSecretMask([KEY]);

describe('createSecretMask', () => {
  it.each<[string, string, string]>([
    ['the key as sent', `key=${KEY};`, `key=${REDACTED};`],
    ['the key in upper case', `key=${KEY.toUpperCase()};`, `key=${REDACTED};`],
    ['the key in lower case', `key=${KEY.toLowerCase()};`, `key=${REDACTED};`],
    ['the key twice, back to back', `${KEY}${KEY}`, REDACTED],
    ['the key twice, apart', `${KEY} and ${KEY}`, `${REDACTED} and ${REDACTED}`],
    ['its first half', `got ${KEY.slice(0, 24)}…`, `got ${REDACTED}…`],
    ['its last 16 characters', `…${KEY.slice(-16)}`, `…${REDACTED}`],
    ['16 characters from its middle, re-cased', `[${KEY.slice(10, 26).toUpperCase()}]`, `[${REDACTED}]`],
    ['the key with a character dropped', `${KEY.slice(0, 20)}${KEY.slice(21)}`, REDACTED],
  ])('masks %s', (_label, text, masked) => {
    expect(mask(text)).toBe(masked);
  });

  it(`leaves runs shorter than ${MIN_MASKED_RUN} characters, or any text would lose its common letters`, () => {
    const text = `${KEY.slice(0, MIN_MASKED_RUN - 1)} ${KEY.slice(20, 20 + MIN_MASKED_RUN - 1)}`;

    expect(mask(text)).toBe(text);
  });

  it('masks a key as JSON escapes it', () => {
    const quoted = 'test-"quoted"-key\\0123456789';

    expect(createSecretMask([quoted])(`{"echo":${JSON.stringify(quoted)}}`)).toBe(`{"echo":"${REDACTED}"}`);
  });

  it('masks every secret it knows, and anything shaped like a generated key', () => {
    const other = 'another-secret-0123456789';
    const generated = `payk_${'a'.repeat(43)}`;
    const shortLegacy = 'payk_abcDEF012_-xyz';

    expect(
      createSecretMask([KEY, other])(
        `${KEY} ${other} ${generated} ${generated.toUpperCase()} ${shortLegacy}`,
      ),
    ).toBe([REDACTED, REDACTED, REDACTED, REDACTED, REDACTED].join(' '));
  });

  it('masks a key of the key format it was not told of, whatever its prefix, and the legacy shape beside it', () => {
    const fresh = generateKey();
    const other = generateKey('acme');
    const legacy = `payk_${'b'.repeat(43)}`;

    expect(createSecretMask([])(`a ${fresh}, b ${other}, c ${legacy}.`)).toBe(
      `a ${REDACTED}, b ${REDACTED}, c ${REDACTED}.`,
    );
  });

  it('leaves text without a secret as it was, and masks nothing for no secret', () => {
    const text = 'HTTP/1.1 200 OK, {"code":"ok"} İstanbul ß';

    expect(mask(text)).toBe(text);
    expect(createSecretMask([''])(text)).toBe(text);
  });

  it('keeps the text around a masked run exactly, whatever characters it holds', () => {
    expect(mask(`İ${KEY}ß`)).toBe(`İ${REDACTED}ß`);
  });
});
