/**
 * docs/secret.schema.json, the published format of the keys secret, agrees with the parser: every secret the
 * strict parser (what the key CLI and the rotation Lambda accept) reads is valid, and every secret it refuses is
 * invalid, except for the two rules a schema cannot express, which are listed here and in the schema itself.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import fc from 'fast-check';
import { parseKeyDocument } from '../../../../shared/keys/key-document';
import { toDigestForm } from '../../../../shared/keys/key-material';
import { DEMO_KEY, DEMO_NEXT_KEY, PARTNER_KEY } from '../../../support/keys';

const schema = JSON.parse(
  readFileSync(join(__dirname, '..', '..', '..', '..', 'docs', 'secret.schema.json'), 'utf8'),
) as object;
const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(schema);

function parserAccepts(secret: unknown): boolean {
  try {
    parseKeyDocument(JSON.stringify(secret));
    return true;
  } catch {
    return false;
  }
}

const EXPIRES = '2026-12-24T00:00:00+01:00';

describe('docs/secret.schema.json', () => {
  it.each([
    [
      "today's forms: a key, a list, a digest",
      { demo: DEMO_KEY, partner: [PARTNER_KEY, DEMO_NEXT_KEY], hashed: [toDigestForm(DEMO_KEY)] },
    ],
    ['a key with an expiry', { shop: [DEMO_KEY, { key: DEMO_NEXT_KEY, expires: EXPIRES }] }],
    ['a lone key object', { shop: { key: DEMO_KEY, expires: '2026-12-24T00:00:00Z' } }],
    [
      'an app object with an allowlist',
      { shop: { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/24', '2001:db8::/32', '198.51.100.7'] } },
    ],
    ['an app object with an empty allowlist', { shop: { keys: [{ key: DEMO_KEY }], allowedCidrs: [] } }],
    ['an app object with a rate limit', { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 0.5 } } }],
    ['a rate limit with a burst', { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 20, burst: 40 } } }],
    ['no apps', {}],
  ])('accepts %s, as the parser does', (_label, secret) => {
    expect(validate(secret)).toBe(true);
    expect(parserAccepts(secret)).toBe(true);
  });

  it.each([
    ['an unknown field in a key object', { shop: [{ key: DEMO_KEY, expiry: EXPIRES }] }],
    ['an expiry without an offset', { shop: [{ key: DEMO_KEY, expires: '2026-12-24T00:00:00' }] }],
    ['an expiry that is a date only', { shop: [{ key: DEMO_KEY, expires: '2026-12-24' }] }],
    ['an impossible date (30 February)', { shop: [{ key: DEMO_KEY, expires: '2026-02-30T00:00:00Z' }] }],
    ['a lone object with both key and keys', { shop: { key: DEMO_KEY, keys: [PARTNER_KEY] } }],
    ['an unknown field in an app object', { shop: { keys: [DEMO_KEY], allowedIps: ['203.0.113.0/24'] } }],
    ['an allowlist entry that is not an address', { shop: { keys: [DEMO_KEY], allowedCidrs: ['office'] } }],
    ['an IPv4 prefix over 32', { shop: { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.0/33'] } }],
    ['an app object without keys', { shop: { allowedCidrs: [] } }],
    ['a rate limit without perSecond', { shop: { keys: [DEMO_KEY], rateLimit: { burst: 10 } } }],
    ['a rate limit of zero', { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 0 } } }],
    ['a fractional burst', { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 5, burst: 2.5 } } }],
    [
      'an unknown field in a rate limit',
      { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: 5, perMinute: 100 } } },
    ],
    ['a rate limit given as text', { shop: { keys: [DEMO_KEY], rateLimit: { perSecond: '5' } } }],
    ['an empty key list', { shop: [] }],
    ['a short key', { shop: ['short'] }],
    ['a truncated digest', { shop: ['sha256:abc'] }],
    ['an app id with a space', { 'my shop': DEMO_KEY }],
    ['an app id shaped like a generated key', { PAYK_abc: DEMO_KEY }],
    ['an app id shaped like the generated demo key', { ['A1b2C3d4'.repeat(6)]: DEMO_KEY }],
    ['an array instead of an object', [DEMO_KEY]],
  ])('refuses %s, as the parser does', (_label, secret) => {
    expect(validate(secret)).toBe(false);
    expect(parserAccepts(secret)).toBe(false);
  });

  it.each([
    ['a leap second', { shop: [{ key: DEMO_KEY, expires: '2016-12-31T23:59:60Z' }] }],
    ['a CIDR block with host bits set', { shop: { keys: [DEMO_KEY], allowedCidrs: ['203.0.113.7/24'] } }],
  ])("accepts %s, which only the parser refuses (stated in the schema's description)", (_label, secret) => {
    expect(validate(secret)).toBe(true);
    expect(parserAccepts(secret)).toBe(false);
  });

  it('agrees with the parser on generated secrets', () => {
    const storedKey = fc.constantFrom(
      DEMO_KEY,
      PARTNER_KEY,
      toDigestForm(DEMO_NEXT_KEY),
      'short',
      'sha256:00',
      'has space in it 0123',
    );
    const expires = fc.constantFrom(
      '2026-12-24T00:00:00Z',
      '2026-12-24T01:00:00+01:00',
      '2026-12-24',
      'soon',
    );
    const keyObject = fc.record({ key: storedKey, expires }, { requiredKeys: ['key'] });
    const keyEntry = fc.oneof(storedKey, keyObject, fc.record({ key: storedKey, note: fc.constant('x') }));
    const cidr = fc.constantFrom('203.0.113.0/24', '2001:db8::/32', '198.51.100.7', 'office', '10.0.0.0/40');
    const appObject = fc.record(
      { keys: fc.array(keyEntry, { maxLength: 3 }), allowedCidrs: fc.array(cidr, { maxLength: 3 }) },
      { requiredKeys: [] },
    );
    const appEntry = fc.oneof(keyEntry, fc.array(keyEntry, { maxLength: 3 }), appObject);
    const appId = fc.constantFrom('shop', 'partner-2', 'a.b_c', 'bad id', 'payk_x');
    const secret = fc.dictionary(appId, appEntry, { maxKeys: 3 });

    fc.assert(
      fc.property(secret, (candidate) => validate(candidate) === parserAccepts(candidate)),
      { numRuns: 500 },
    );
  });
});
