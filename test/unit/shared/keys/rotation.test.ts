import { KeyDocumentError, parseKeyDocument, type KeyDocument } from '../../../../shared/keys/key-document';
import { MIN_KEYS_KEPT_BY_ROTATION, rotateAllApps } from '../../../../shared/keys/rotation';
import { toDigestForm } from '../../../../shared/keys/key-material';

const KEY_A = 'test-rotation-key-a-0123456789';
const KEY_B = 'test-rotation-key-b-0123456789';
const KEY_C = 'test-rotation-key-c-0123456789';
const HASHED = toDigestForm('test-rotation-hashed-0123456789');

/** Fresh keys in a known order: fresh-1, fresh-2, ... */
function freshKeys(): () => string {
  let count = 0;
  return () => `test-rotation-fresh-${++count}-0123456789`;
}

function document(entries: Record<string, unknown>): KeyDocument {
  return parseKeyDocument(JSON.stringify(entries));
}

/** The stored keys of one app, oldest first. */
function stored(doc: KeyDocument, appId: string): string[] | undefined {
  return doc.get(appId)?.keys.map((key) => key.stored);
}

describe('rotateAllApps', () => {
  it("keeps what it does not own: the kept keys' expiries and the app's allowlist", () => {
    const expiring = { key: KEY_B, expires: '2026-12-24T00:00:00+01:00' };
    const original = document({ shop: { keys: [KEY_A, expiring], allowedCidrs: ['203.0.113.0/24'] } });

    const rotated = rotateAllApps(original, 2, freshKeys());

    expect(rotated.document.get('shop')).toEqual({
      keys: [
        { stored: KEY_B, expires: '2026-12-24T00:00:00+01:00' },
        { stored: 'test-rotation-fresh-1-0123456789' },
      ],
      allowedCidrs: ['203.0.113.0/24'],
    });
  });

  it.each([
    ['a single key, keep 2', [KEY_A], 2, [KEY_A, 'test-rotation-fresh-1-0123456789']],
    ['two keys, keep 2: the oldest goes', [KEY_A, KEY_B], 2, [KEY_B, 'test-rotation-fresh-1-0123456789']],
    [
      'three keys, keep 2: only the newest stays with the fresh one',
      [KEY_A, KEY_B, KEY_C],
      2,
      [KEY_C, 'test-rotation-fresh-1-0123456789'],
    ],
    ['two keys, keep 3: nothing goes', [KEY_A, KEY_B], 3, [KEY_A, KEY_B, 'test-rotation-fresh-1-0123456789']],
  ])('appends one fresh key and keeps the newest: %s', (_label, keys, keep, expected) => {
    const rotated = rotateAllApps(document({ demo: keys }), keep, freshKeys());

    expect(stored(rotated.document, 'demo')).toEqual(expected);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
  });

  it('gives every app its own fresh key', () => {
    const rotated = rotateAllApps(document({ partner: [KEY_B], demo: [KEY_A] }), 2, freshKeys());

    expect(stored(rotated.document, 'demo')).toEqual([KEY_A, 'test-rotation-fresh-1-0123456789']);
    expect(stored(rotated.document, 'partner')).toEqual([KEY_B, 'test-rotation-fresh-2-0123456789']);
    expect(rotated.rotatedAppIds).toEqual(['demo', 'partner']);
  });

  it.each([
    ['only a digest', [HASHED]],
    ['a digest beside a plain key', [KEY_A, HASHED]],
  ])('leaves an app holding %s alone', (_label, keys) => {
    const rotated = rotateAllApps(document({ hashed: keys, demo: [KEY_B] }), 2, freshKeys());

    expect(stored(rotated.document, 'hashed')).toEqual(keys);
    expect(rotated.skippedAppIds).toEqual(['hashed']);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
  });

  it('does not change the document it was given', () => {
    const original = document({ demo: [KEY_A, KEY_B] });

    rotateAllApps(original, 2, freshKeys());

    expect(stored(original, 'demo')).toEqual([KEY_A, KEY_B]);
  });

  it('rotates an empty document into an empty document', () => {
    const rotated = rotateAllApps(new Map(), 2, freshKeys());

    expect(rotated.document.size).toBe(0);
    expect(rotated.rotatedAppIds).toEqual([]);
  });

  it.each([1, 0, -2, 2.5, Number.NaN])('refuses keep = %p', (keep) => {
    expect(() => rotateAllApps(document({ demo: [KEY_A] }), keep, freshKeys())).toThrow(
      new KeyDocumentError(`keep must be a whole number of at least ${MIN_KEYS_KEPT_BY_ROTATION}`),
    );
  });

  it('refuses a fresh key the app already has', () => {
    expect(() => rotateAllApps(document({ demo: [KEY_A] }), 2, () => KEY_A)).toThrow(KeyDocumentError);
  });

  it('refuses a fresh key that is not a valid key', () => {
    expect(() => rotateAllApps(document({ demo: [KEY_A] }), 2, () => 'short')).toThrow(KeyDocumentError);
  });
});
