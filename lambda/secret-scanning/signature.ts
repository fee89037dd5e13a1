import { createPublicKey, verify, type KeyObject } from 'node:crypto';

/**
 * GitHub signs each secret scanning alert: ECDSA over NIST P-256 with SHA-256, over the request body exactly as
 * sent, the signature in base64 of its DER encoding (`Github-Public-Key-Signature`), made with the key named by
 * `Github-Public-Key-Identifier` from its public keys document. Pure: the keys come from the caller.
 */

export const SIGNATURE_HEADERS = {
  keyIdentifier: 'github-public-key-identifier',
  signature: 'github-public-key-signature',
} as const;

/** GitHub's identifiers are 64 hex characters; anything of this shape is looked up, anything else refused. */
const KEY_IDENTIFIER = /^[A-Za-z0-9._-]{1,128}$/;
/** A DER ECDSA P-256 signature is at most 72 bytes: 96 base64 characters. Padded base64, nothing else. */
const SIGNATURE_BASE64 = /^[A-Za-z0-9+/]{8,96}={0,2}$/;

export type SignatureProblem = 'missing_signature' | 'duplicate_header' | 'malformed_signature';

export type SignatureHeaders =
  | { readonly ok: true; readonly keyIdentifier: string; readonly signature: Buffer }
  | { readonly ok: false; readonly reason: SignatureProblem };

/** The two headers, each sent once and well formed; their values are never repeated in a reason. */
export function readSignatureHeaders(
  identifierValues: readonly string[],
  signatureValues: readonly string[],
): SignatureHeaders {
  if (identifierValues.length > 1 || signatureValues.length > 1)
    return { ok: false, reason: 'duplicate_header' };
  const keyIdentifier = identifierValues[0]?.trim() ?? '';
  const signatureText = signatureValues[0]?.trim() ?? '';
  if (keyIdentifier === '' || signatureText === '') return { ok: false, reason: 'missing_signature' };
  if (
    !KEY_IDENTIFIER.test(keyIdentifier) ||
    !SIGNATURE_BASE64.test(signatureText) ||
    signatureText.length % 4 !== 0
  ) {
    return { ok: false, reason: 'malformed_signature' };
  }
  return { ok: true, keyIdentifier, signature: Buffer.from(signatureText, 'base64') };
}

/** Whether `signature` (DER) is `publicKey`'s ECDSA P-256 / SHA-256 signature of `body`. Never throws. */
export function isValidSignature(body: Buffer, signature: Buffer, publicKey: KeyObject): boolean {
  try {
    return verify('sha256', body, { key: publicKey, dsaEncoding: 'der' }, signature);
  } catch {
    // A signature that is not DER at all: OpenSSL refuses to parse it.
    return false;
  }
}

/** A key of GitHub's document, usable for verification: P-256 only, whatever else the document lists. */
export interface PublicKeyEntry {
  readonly keyIdentifier: string;
  readonly key: KeyObject;
  readonly isCurrent: boolean;
}

export type PublicKeysReading =
  | { readonly ok: true; readonly keys: readonly PublicKeyEntry[]; readonly skipped: number }
  | { readonly ok: false; readonly problem: string };

function p256Key(pem: unknown): KeyObject | undefined {
  if (typeof pem !== 'string' || pem.length > 4_096) return undefined;
  try {
    const key = createPublicKey({ key: pem, format: 'pem' });
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
      ? key
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * GitHub's public keys document: `{"public_keys": [{"key_identifier", "key" (PEM), "is_current"}]}`. An entry that is
 * not a P-256 public key with an identifier is skipped (counted); a document that is not of this shape, or holds no
 * usable key, is refused with one line that never quotes it.
 */
export function parsePublicKeys(text: string): PublicKeysReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the public keys document is not JSON' };
  }
  const list =
    typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>).public_keys
      : undefined;
  if (!Array.isArray(list)) {
    return { ok: false, problem: 'the public keys document has no "public_keys" list' };
  }
  const keys: PublicKeyEntry[] = [];
  let skipped = 0;
  for (const entry of list as unknown[]) {
    const fields = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>) : {};
    const keyIdentifier = fields.key_identifier;
    const key = p256Key(fields.key);
    if (typeof keyIdentifier !== 'string' || !KEY_IDENTIFIER.test(keyIdentifier) || key === undefined) {
      skipped += 1;
      continue;
    }
    keys.push({ keyIdentifier, key, isCurrent: fields.is_current === true });
  }
  if (keys.length === 0) return { ok: false, problem: 'the public keys document holds no usable P-256 key' };
  return { ok: true, keys, skipped };
}
