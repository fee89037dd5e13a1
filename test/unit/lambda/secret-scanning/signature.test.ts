import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import {
  isValidSignature,
  parsePublicKeys,
  readSignatureHeaders,
} from '../../../../lambda/secret-scanning/signature';
import { createGithubSigner, publicKeysDocument } from '../../../support/secret-scanning';

const signer = createGithubSigner('a'.repeat(64));
const publicKey = createPublicKey(signer.publicKeyPem);
const BODY = Buffer.from('[{"token":"pay_x","type":"t","url":"u","source":"content"}]');

describe('readSignatureHeaders', () => {
  it('reads an identifier and a base64 DER signature', () => {
    const signature = signer.signatureOf(BODY);

    expect(readSignatureHeaders([signer.keyIdentifier], [signature])).toEqual({
      ok: true,
      keyIdentifier: signer.keyIdentifier,
      signature: Buffer.from(signature, 'base64'),
    });
  });

  it.each<[string, string[], string[], string]>([
    ['no headers at all', [], [], 'missing_signature'],
    ['no identifier', [], ['MEUCIQ=='], 'missing_signature'],
    ['no signature', ['abc'], [], 'missing_signature'],
    ['an empty signature', ['abc'], [' '], 'missing_signature'],
    ['an identifier sent twice', ['abc', 'abc'], ['MEUCIQ=='], 'duplicate_header'],
    ['a signature sent twice', ['abc'], ['MEUCIQ==', 'MEUCIQ=='], 'duplicate_header'],
    ['an identifier with spaces in it', ['a b'], ['MEUCIQ=='], 'malformed_signature'],
    ['a signature that is not base64', ['abc'], ['not base64!'], 'malformed_signature'],
    ['a signature longer than any P-256 one', ['abc'], ['A'.repeat(200)], 'malformed_signature'],
    ['a base64 signature of the wrong length', ['abc'], ['MEUCIQA'], 'malformed_signature'],
  ])('refuses %s', (_case, identifiers, signatures, reason) => {
    expect(readSignatureHeaders(identifiers, signatures)).toEqual({ ok: false, reason });
  });
});

describe('isValidSignature', () => {
  it('accepts the signature of exactly these bytes', () => {
    expect(isValidSignature(BODY, Buffer.from(signer.signatureOf(BODY), 'base64'), publicKey)).toBe(true);
  });

  const changed = Buffer.from(BODY);
  changed[3] = 0x41;

  it.each<[string, Buffer, Buffer]>([
    ['it over a body changed by one byte', changed, Buffer.from(signer.signatureOf(BODY), 'base64')],
    [
      "another key's signature",
      BODY,
      Buffer.from(createGithubSigner('b'.repeat(64)).signatureOf(BODY), 'base64'),
    ],
    ['bytes that are not a DER signature, without throwing', BODY, Buffer.from('not a signature at all')],
  ])('refuses %s', (_case, body, signature) => {
    expect(isValidSignature(body, signature, publicKey)).toBe(false);
  });
});

describe('parsePublicKeys', () => {
  it("reads GitHub's document: each P-256 key by its identifier, current or not", () => {
    const second = createGithubSigner('second');
    const reading = parsePublicKeys(publicKeysDocument([signer, second]));

    if (!reading.ok) throw new Error(reading.problem);
    expect(reading.keys.map((entry) => [entry.keyIdentifier, entry.isCurrent])).toEqual([
      [signer.keyIdentifier, true],
      ['second', false],
    ]);
    expect(reading.skipped).toBe(0);
  });

  it('skips an entry that is not a P-256 public key, and counts it', () => {
    // Any RSA key is refused for not being P-256; 1,024 bits generates in a fraction of 2,048's time.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    });
    const document = JSON.parse(publicKeysDocument([signer])) as { public_keys: unknown[] };
    document.public_keys.push(
      { key_identifier: 'rsa', key: rsa, is_current: false },
      { key_identifier: 'p384', key: p384, is_current: false },
      { key_identifier: 'garbage', key: '-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----' },
      { key: signer.publicKeyPem },
      'not an object',
    );

    const reading = parsePublicKeys(JSON.stringify(document));

    expect(reading).toMatchObject({ ok: true, skipped: 5 });
  });

  it.each([
    ['text that is not JSON', '<html>rate limited</html>', 'the public keys document is not JSON'],
    ['an empty answer', '', 'the public keys document is not JSON'],
    ['a JSON array', '[]', 'the public keys document has no "public_keys" list'],
    ['an object without the list', '{"keys": []}', 'the public keys document has no "public_keys" list'],
    ['an empty list', '{"public_keys": []}', 'the public keys document holds no usable P-256 key'],
  ])('refuses %s in one line that does not quote it', (_case, text, problem) => {
    expect(parsePublicKeys(text)).toEqual({ ok: false, problem });
  });
});
