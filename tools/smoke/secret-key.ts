import { DIGEST_PREFIX } from '../../shared/keys/key-material';
import type { KeyDocument } from '../../shared/keys/key-document';

export type SmokeKeyChoice =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'unknown-app' }
  /** Only `sha256:` digests are stored for the app: there is no key to send. */
  | { readonly kind: 'digests-only' };

/**
 * The key the smoke test sends for `appId`: the newest plain key, the last in its list (keys are kept oldest
 * first, and a rotation appends), so the test proves the key clients are moving to.
 */
export function chooseSmokeKey(document: KeyDocument, appId: string): SmokeKeyChoice {
  const keys = document.get(appId);
  if (keys === undefined) return { kind: 'unknown-app' };
  const plain = keys.filter((key) => !key.startsWith(DIGEST_PREFIX));
  const newest = plain[plain.length - 1];
  return newest === undefined ? { kind: 'digests-only' } : { kind: 'key', key: newest };
}
