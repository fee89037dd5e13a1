import { DIGEST_PREFIX } from '../../shared/keys/key-material';
import { isExpired, type KeyDocument } from '../../shared/keys/key-document';

export type SmokeKeyChoice =
  | { readonly kind: 'key'; readonly key: string }
  | { readonly kind: 'unknown-app' }
  /** Only `sha256:` digests are stored for the app: there is no key to send. */
  | { readonly kind: 'digests-only' }
  /** The app's plain keys have all expired: any of them would get 401. */
  | { readonly kind: 'expired-only' };

/**
 * The key the smoke test sends for `appId`: the newest plain key that has not expired at `now`, the last such in
 * its list (keys are kept oldest first, and a rotation appends), so the test proves the key clients are moving to.
 */
export function chooseSmokeKey(
  document: KeyDocument,
  appId: string,
  now: number = Date.now(),
): SmokeKeyChoice {
  const app = document.get(appId);
  if (app === undefined) return { kind: 'unknown-app' };
  const plain = app.keys.filter((key) => !key.stored.startsWith(DIGEST_PREFIX));
  if (plain.length === 0) return { kind: 'digests-only' };
  const newest = plain.filter((key) => !isExpired(key, now)).at(-1);
  return newest === undefined ? { kind: 'expired-only' } : { kind: 'key', key: newest.stored };
}
