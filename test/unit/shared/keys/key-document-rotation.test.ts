import {
  KeyDocumentError,
  MIN_KEYS_KEPT_BY_ROTATION,
  parseKeyDocument,
  rotateAllApps,
  type KeyDocument,
} from '../../../../shared/keys/key-document';
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

function document(entries: Record<string, string[]>): KeyDocument {
  return parseKeyDocument(JSON.stringify(entries));
}

describe('rotateAllApps', () => {
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

    expect(rotated.document.get('demo')).toEqual(expected);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
  });

  it('gives every app its own fresh key', () => {
    const rotated = rotateAllApps(document({ partner: [KEY_B], demo: [KEY_A] }), 2, freshKeys());

    expect(rotated.document.get('demo')).toEqual([KEY_A, 'test-rotation-fresh-1-0123456789']);
    expect(rotated.document.get('partner')).toEqual([KEY_B, 'test-rotation-fresh-2-0123456789']);
    expect(rotated.rotatedAppIds).toEqual(['demo', 'partner']);
  });

  it.each([
    ['only a digest', [HASHED]],
    ['a digest beside a plain key', [KEY_A, HASHED]],
  ])('leaves an app holding %s alone', (_label, keys) => {
    const rotated = rotateAllApps(document({ hashed: keys, demo: [KEY_B] }), 2, freshKeys());

    expect(rotated.document.get('hashed')).toEqual(keys);
    expect(rotated.skippedAppIds).toEqual(['hashed']);
    expect(rotated.rotatedAppIds).toEqual(['demo']);
  });

  it('does not change the document it was given', () => {
    const original = document({ demo: [KEY_A, KEY_B] });

    rotateAllApps(original, 2, freshKeys());

    expect(original.get('demo')).toEqual([KEY_A, KEY_B]);
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
