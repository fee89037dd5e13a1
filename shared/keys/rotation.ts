import { DIGEST_PREFIX } from './key-material';
import {
  addKey,
  appOf,
  byCodeUnit,
  KeyDocumentError,
  withApp,
  type DocumentKey,
  type KeyDocument,
} from './key-document';

/**
 * Scheduled rotation keeps at least two keys per app: the key clients hold now must stay valid for one more
 * period after the fresh key arrives, or every client is locked out the moment rotation finishes.
 */
export const MIN_KEYS_KEPT_BY_ROTATION = 2;

export interface RotatedDocument {
  readonly document: KeyDocument;
  /** Apps that got a fresh key, sorted. */
  readonly rotatedAppIds: readonly string[];
  /** Apps holding a `sha256:` key, left as they were: a digest cannot be handed to a client. Sorted. */
  readonly skippedAppIds: readonly string[];
}

export function assertValidRotationKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < MIN_KEYS_KEPT_BY_ROTATION) {
    throw new KeyDocumentError(`keep must be a whole number of at least ${MIN_KEYS_KEPT_BY_ROTATION}`);
  }
}

/** An app whose keys are kept as digests is managed by hand: rotation cannot give its client the new key. */
export function holdsDigestKey(keys: readonly DocumentKey[]): boolean {
  return keys.some((key) => key.stored.startsWith(DIGEST_PREFIX));
}

/**
 * One scheduled rotation: every app gets one fresh key from `newKey`, appended after its keys (newest last),
 * and keeps at most `keep` newest keys, so the key before the fresh one stays valid for one more period. Every
 * other field of an app (expiries, its allowlist) is kept as it was.
 */
export function rotateAllApps(document: KeyDocument, keep: number, newKey: () => string): RotatedDocument {
  assertValidRotationKeep(keep);
  let next = document;
  const rotatedAppIds: string[] = [];
  const skippedAppIds: string[] = [];
  for (const appId of [...document.keys()].sort(byCodeUnit)) {
    if (holdsDigestKey(appOf(document, appId).keys)) {
      skippedAppIds.push(appId);
      continue;
    }
    const withFreshKey = addKey(next, appId, { stored: newKey() });
    const app = appOf(withFreshKey, appId);
    next = withApp(withFreshKey, appId, { ...app, keys: app.keys.slice(-keep) });
    rotatedAppIds.push(appId);
  }
  return { document: next, rotatedAppIds, skippedAppIds };
}
