import { timingSafeEqual } from 'node:crypto';
import { expiresAtOf, withApp, type DocumentKey, type KeyDocument } from './key-document';
import { keyIdFromDigest, matchDigest, MATCH_DIGEST_BYTES, readStoredKey } from './key-material';
import { formatTimestamp } from './timestamp';

/**
 * From a leaked key to the entries that hold it, and the edits that end it: the pure part shared by the secret
 * scanning function (lambda/secret-scanning) and the key CLI's `leaked`. Neither reads nor writes anything; the
 * caller reads each shard's document, asks here, and writes the edited document with its own compare-and-swap.
 *
 * A report carries the key and nothing else: not its app, so not its shard. Every form of stored key is searched
 * (plain, `sha256:`, `d:`) by the 16 bytes every request compares: the first 16 of the key's SHA-256
 * (matchDigestOf in key-material.ts).
 */

/** Where one stored key stands for the leaked key. */
export interface KeyLocation {
  readonly appId: string;
  /** The key id `list` shows for that entry (from the digest bytes the entry stores). */
  readonly keyId: string;
  /** 0-based position of the key in its app's list, in the document it was found in. */
  readonly position: number;
}

/**
 * Every entry of `document` whose stored key stands for the key whose match digest is `digest` (matchDigestOf(key):
 * 16 bytes), in app order: one, normally; more only if an operator gave one key to several apps. Entries that do not
 * read as a key are skipped (parseKeyDocument has already refused a document with one).
 */
export function findKeysByDigest(document: KeyDocument, digest: Buffer): KeyLocation[] {
  if (digest.length !== MATCH_DIGEST_BYTES) {
    throw new RangeError(`a match digest has ${MATCH_DIGEST_BYTES} bytes, got ${digest.length}`);
  }
  const found: KeyLocation[] = [];
  for (const [appId, app] of document) {
    app.keys.forEach((key, position) => {
      const reading = readStoredKey(key.stored);
      if (reading.ok && timingSafeEqual(matchDigest(reading.digest), digest)) {
        found.push({ appId, keyId: keyIdFromDigest(reading.digest), position });
      }
    });
  }
  return found;
}

function keyAt(document: KeyDocument, location: KeyLocation): DocumentKey {
  const key = document.get(location.appId)?.keys[location.position];
  if (key === undefined) {
    throw new RangeError(`no key at position ${location.position + 1} of app ${location.appId}`);
  }
  return key;
}

/** Whether the key at `location` is already refused at `at`: it expires at or before that instant. */
export function isEndedBy(document: KeyDocument, location: KeyLocation, at: number): boolean {
  const expiresAt = expiresAtOf(keyAt(document, location));
  return expiresAt !== undefined && expiresAt <= at;
}

export interface KeyEdit {
  readonly document: KeyDocument;
  /** False when the document already refused the key: nothing to write. */
  readonly changed: boolean;
  /** The app had no other key, so it left the document with this one (removeKeyAt only). */
  readonly appRemoved: boolean;
}

/**
 * Ends the key at `location` by giving it `expires` = `at`, unless it already expires by then (changed: false). The
 * entry stays, as it was stored (so its key id does not change), until a prune or a rotation removes it; meanwhile a
 * second report of the same key finds it ended and writes nothing, and the app keeps its other keys, its allowlist
 * and its rate limit even when this was its only key. Every reader refuses it as an expired key once its cache
 * refreshes.
 */
export function expireKeyAt(document: KeyDocument, location: KeyLocation, at: number): KeyEdit {
  const key = keyAt(document, location);
  if (isEndedBy(document, location, at)) return { document, changed: false, appRemoved: false };
  const app = document.get(location.appId);
  if (app === undefined) throw new RangeError(`no app ${location.appId}`);
  const keys = app.keys.map((existing, position) =>
    position === location.position ? { stored: key.stored, expires: formatTimestamp(at) } : existing,
  );
  return { document: withApp(document, location.appId, { ...app, keys }), changed: true, appRemoved: false };
}

/**
 * Removes the key at `location` from its app. An app cannot be stored without a key (an empty list is malformed),
 * so an app whose only key this was leaves the document (appRemoved: true), as the CLI's `revoke --force` does.
 */
export function removeKeyAt(document: KeyDocument, location: KeyLocation): KeyEdit {
  keyAt(document, location);
  const app = document.get(location.appId);
  if (app === undefined) throw new RangeError(`no app ${location.appId}`);
  const keys = app.keys.filter((_, position) => position !== location.position);
  return keys.length === 0
    ? { document: withApp(document, location.appId, undefined), changed: true, appRemoved: true }
    : { document: withApp(document, location.appId, { ...app, keys }), changed: true, appRemoved: false };
}

/** What ending every entry of one leaked key in a document did. */
export interface LeakEdit {
  readonly document: KeyDocument;
  /** Where the key was, as found before the edit. Empty: the key is not in this document. */
  readonly found: readonly KeyLocation[];
  /** Whether anything changed: false when the key is absent, or every entry of it was already ended. */
  readonly changed: boolean;
  /** Apps that left the document because the key was their only one (removeKeysByDigest only). */
  readonly removedApps: readonly string[];
}

/** expireKeyAt for every entry of the key in `document`: what the secret scanning function does. */
export function expireKeysByDigest(document: KeyDocument, digest: Buffer, at: number): LeakEdit {
  const found = findKeysByDigest(document, digest);
  let edited = document;
  let changed = false;
  for (const location of found) {
    const edit = expireKeyAt(edited, location, at);
    edited = edit.document;
    changed ||= edit.changed;
  }
  return { document: edited, found, changed, removedApps: [] };
}

/** removeKeyAt for every entry of the key in `document`, last first so that earlier positions stay valid. */
export function removeKeysByDigest(document: KeyDocument, digest: Buffer): LeakEdit {
  const found = findKeysByDigest(document, digest);
  let edited = document;
  const removedApps: string[] = [];
  for (const location of [...found].reverse()) {
    const edit = removeKeyAt(edited, location);
    edited = edit.document;
    if (edit.appRemoved) removedApps.push(location.appId);
  }
  return { document: edited, found, changed: found.length > 0, removedApps: removedApps.reverse() };
}
