import {
  appLabel,
  appOf,
  assertValidKeyId,
  byCodeUnit,
  expiresAtOf,
  isExpired,
  keyIdOf,
  KeyDocumentError,
  withApp,
  type DocumentApp,
  type DocumentKey,
  type DocumentRateLimit,
  type KeyDocument,
} from './key-document';
import { canonicalAddress, parseCidr } from './network';
import { readRateLimit } from './rate-limit';
import { formatTimestamp } from './timestamp';

/**
 * Edits of the rules an app's keys live by: when each key expires, and which networks may use them. Pure: the
 * clock comes in as `now`, and every edit returns a new document (or throws KeyDocumentError and changes nothing).
 */

function keyIndex(app: DocumentApp, appId: string, keyId: string): number {
  const index = app.keys.findIndex((key) => keyIdOf(key.stored) === keyId);
  if (index === -1) throw new KeyDocumentError(`${appLabel(appId)} has no key ${keyId}`);
  return index;
}

function withKeys(document: KeyDocument, appId: string, app: DocumentApp, keys: DocumentKey[]): KeyDocument {
  return withApp(document, appId, { ...app, keys });
}

function withExpiry(key: DocumentKey, at: number | undefined): DocumentKey {
  return at === undefined ? { stored: key.stored } : { stored: key.stored, expires: formatTimestamp(at) };
}

/** Sets one key's expiry to `at` (epoch ms), or clears it with undefined: the key then lives until revoked. */
export function setKeyExpiry(
  document: KeyDocument,
  appId: string,
  keyId: string,
  at: number | undefined,
): KeyDocument {
  assertValidKeyId(keyId);
  const app = appOf(document, appId);
  const index = keyIndex(app, appId, keyId);
  return withKeys(
    document,
    appId,
    app,
    app.keys.map((key, position) => (position === index ? withExpiry(key, at) : key)),
  );
}

/**
 * A rotation's grace: every key of the app but `keepKeyId` expires at the earlier of its own expiry and `at`, as
 * Unkey's rollKey and Stripe's "roll key" do. An expiry already earlier is left as written.
 */
export function limitOtherKeysExpiry(
  document: KeyDocument,
  appId: string,
  keepKeyId: string,
  at: number,
): KeyDocument {
  const app = appOf(document, appId);
  keyIndex(app, appId, keepKeyId);
  return withKeys(
    document,
    appId,
    app,
    app.keys.map((key) => {
      if (keyIdOf(key.stored) === keepKeyId) return key;
      const current = expiresAtOf(key);
      return current !== undefined && current <= at ? key : withExpiry(key, at);
    }),
  );
}

export interface PrunedKey {
  readonly appId: string;
  readonly keyId: string;
}

export interface PruneResult {
  readonly document: KeyDocument;
  /** Every key removed, by app (code-unit order) and position. */
  readonly removed: readonly PrunedKey[];
  /** Apps removed because every key they had had expired (an app cannot be written without keys). */
  readonly removedApps: readonly string[];
}

/** Removes the keys whose expiry has passed at `now`, of one app or of all. */
export function pruneExpiredKeys(document: KeyDocument, now: number, appId?: string): PruneResult {
  const appIds = appId === undefined ? [...document.keys()].sort(byCodeUnit) : [appId];
  let next = document;
  const removed: PrunedKey[] = [];
  const removedApps: string[] = [];
  for (const id of appIds) {
    const app = appOf(document, id);
    const expired = app.keys.filter((key) => isExpired(key, now));
    if (expired.length === 0) continue;
    removed.push(...expired.map((key) => ({ appId: id, keyId: keyIdOf(key.stored) })));
    const live = app.keys.filter((key) => !isExpired(key, now));
    if (live.length === 0) removedApps.push(id);
    next = withApp(next, id, live.length === 0 ? undefined : { ...app, keys: live });
  }
  return { document: next, removed, removedApps };
}

/** How two CIDR blocks compare: by address family, address and prefix, whatever case or zero-compression. */
function cidrIdentity(text: string): string {
  const reading = parseCidr(text);
  if (!reading.ok) return text;
  const canonical = canonicalAddress(reading.cidr.address)?.address ?? reading.cidr.address;
  const address = reading.cidr.family === 'ipv6' ? new URL(`http://[${canonical}]`).hostname : canonical;
  return `${address}/${reading.cidr.prefix}`;
}

/** Whether the app's allowlist holds `cidr`, however either is written. */
export function listsCidr(app: DocumentApp, cidr: string): boolean {
  const wanted = cidrIdentity(cidr);
  return (app.allowedCidrs ?? []).some((listed) => cidrIdentity(listed) === wanted);
}

/** Each block as it will be written, refusing the whole request at the first invalid one (by position). */
function checkedCidrs(cidrs: readonly string[]): string[] {
  if (cidrs.length === 0) throw new KeyDocumentError('give at least one CIDR block');
  return cidrs.map((cidr, index) => {
    const reading = parseCidr(cidr);
    if (!reading.ok) throw new KeyDocumentError(`CIDR block #${index + 1} is not valid: ${reading.reason}`);
    return cidr;
  });
}

/** Adds blocks to the app's allowlist (creating it); blocks it already has are left as they are. */
export function allowCidrs(document: KeyDocument, appId: string, cidrs: readonly string[]): KeyDocument {
  const app = appOf(document, appId);
  const added = checkedCidrs(cidrs);
  const allowed = [...(app.allowedCidrs ?? [])];
  const seen = new Set(allowed.map(cidrIdentity));
  for (const cidr of added) {
    if (seen.has(cidrIdentity(cidr))) continue;
    seen.add(cidrIdentity(cidr));
    allowed.push(cidr);
  }
  return withApp(document, appId, { ...app, allowedCidrs: allowed });
}

/**
 * Removes blocks from the app's allowlist. Every block must be in it, so a typo is an error rather than a silent
 * no-op. Removing the last block leaves an empty allowlist, which allows no network: `allowAnyNetwork` removes the
 * allowlist itself.
 */
export function disallowCidrs(document: KeyDocument, appId: string, cidrs: readonly string[]): KeyDocument {
  const app = appOf(document, appId);
  const removed = checkedCidrs(cidrs);
  if (app.allowedCidrs === undefined) {
    throw new KeyDocumentError(`${appLabel(appId)} has no allowlist: it may call from any network`);
  }
  const removing = new Set(removed.map(cidrIdentity));
  const present = new Set(app.allowedCidrs.map(cidrIdentity));
  const missing = removed.findIndex((cidr) => !present.has(cidrIdentity(cidr)));
  if (missing !== -1) {
    throw new KeyDocumentError(`CIDR block #${missing + 1} is not in the allowlist of ${appLabel(appId)}`);
  }
  return withApp(document, appId, {
    ...app,
    allowedCidrs: app.allowedCidrs.filter((cidr) => !removing.has(cidrIdentity(cidr))),
  });
}

/** Removes the app's allowlist: its keys work from any network again. */
export function allowAnyNetwork(document: KeyDocument, appId: string): KeyDocument {
  const app: { -readonly [Field in keyof DocumentApp]?: DocumentApp[Field] } = { ...appOf(document, appId) };
  delete app.allowedCidrs;
  return withApp(document, appId, { ...app, keys: appOf(document, appId).keys });
}

/** Gives the app a rate limit of its own, checked as the secret's reader checks it; a burst left out is not written. */
export function setRateLimit(document: KeyDocument, appId: string, limit: DocumentRateLimit): KeyDocument {
  const app = appOf(document, appId);
  const reading = readRateLimit(limit);
  if (!reading.ok) throw new KeyDocumentError(reading.reason);
  return withApp(document, appId, { ...app, rateLimit: reading.written });
}

/** Removes the app's own rate limit: the stack's default (`appRateLimit`) applies again. */
export function useDefaultRateLimit(document: KeyDocument, appId: string): KeyDocument {
  const app: { -readonly [Field in keyof DocumentApp]?: DocumentApp[Field] } = { ...appOf(document, appId) };
  delete app.rateLimit;
  return withApp(document, appId, { ...app, keys: appOf(document, appId).keys });
}
