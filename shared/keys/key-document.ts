import { appIdProblem, isValidAppId } from './app-id';
import { readAppEntry } from './app-entry';
import { describeKeyringProblem, describeKeyringProblemWithApp, type KeyringProblem } from './keyring';
import {
  INVALID_KEY_ID_MESSAGE,
  isDigestForm,
  isKeyId,
  keyIdFromDigest,
  readStoredKey,
} from './key-material';
import { memberNamesInTextOrder, readSecretObject } from './secret-json';
import { parseTimestamp } from './timestamp';

/**
 * The secret as operators edit it. Unlike parseKeyring, which serves traffic and skips bad entries, this is
 * strict: a tool that rewrites the secret must not silently drop an entry it did not understand, and keeps every
 * field as written (an expiry in its own offset, a CIDR block as typed).
 */

/** One key of an app: plain or `sha256:`, and its expiry (RFC 3339, as written) when it has one. */
export interface DocumentKey {
  readonly stored: string;
  readonly expires?: string;
}

export interface DocumentApp {
  /** Oldest first: a rotation appends. */
  readonly keys: readonly DocumentKey[];
  /** Absent: any network. Empty: none. */
  readonly allowedCidrs?: readonly string[];
  /** The app's own rate limit, as written (a burst left out is not added). Absent: the stack's default. */
  readonly rateLimit?: DocumentRateLimit;
}

export interface DocumentRateLimit {
  readonly perSecond: number;
  readonly burst?: number;
}

/** App id → its keys and rules. */
export type KeyDocument = ReadonlyMap<string, DocumentApp>;

/**
 * Bad input or a secret that cannot be edited safely. Messages name valid app ids and key ids only, never a key
 * and never a string that failed those checks (it may be a pasted key); entries of the secret go by position.
 */
export class KeyDocumentError extends Error {
  override readonly name = 'KeyDocumentError';
}

/**
 * One entry of the secret is malformed. The message locates it by position only, since it may be logged (the
 * rotation Lambda); `forOperator()` adds the app id for the key CLI, whose user is editing that very secret.
 */
export class MalformedEntryError extends KeyDocumentError {
  constructor(readonly problem: KeyringProblem) {
    super(`the secret's ${describeKeyringProblem(problem)}`);
  }

  forOperator(): string {
    return `the secret's ${describeKeyringProblemWithApp(this.problem)}`;
  }
}

/** Code-unit order: the same on every machine, unlike localeCompare, which follows the ICU data present. */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function assertValidAppId(appId: string): void {
  const problem = appIdProblem(appId);
  if (problem !== undefined) throw new KeyDocumentError(`invalid app id: ${problem}`);
}

export function assertValidKeyId(keyId: string): void {
  // Checked first and never echoed: an operator may have pasted a key where the key id belongs.
  if (!isKeyId(keyId)) throw new KeyDocumentError(INVALID_KEY_ID_MESSAGE);
}

/** `app demo`, or a stand-in for an id that is not valid: such a string is never repeated. */
export function appLabel(appId: string): string {
  return isValidAppId(appId) ? `app ${appId}` : 'an app with an invalid id';
}

/** The key id (fingerprint) of a stored key; the same for a key and its `sha256:` form. */
export function keyIdOf(storedKey: string): string {
  const reading = readStoredKey(storedKey);
  if (!reading.ok) throw new KeyDocumentError(`stored key is malformed: ${reading.reason}`);
  return keyIdFromDigest(reading.digest);
}

/** The instant a key expires, or undefined when it does not. */
export function expiresAtOf(key: DocumentKey): number | undefined {
  return key.expires === undefined ? undefined : parseTimestamp(key.expires);
}

export function isExpired(key: DocumentKey, now: number): boolean {
  const at = expiresAtOf(key);
  return at !== undefined && at <= now;
}

/**
 * The first member name written more than once, by the position of its repeat: JSON.parse keeps only the last
 * value, so rewriting such a secret would silently drop the earlier keys.
 */
function firstRepeatedMember(text: string): { readonly position: number; readonly name: string } | undefined {
  const seen = new Set<string>();
  const names = memberNamesInTextOrder(text);
  for (const [index, name] of names.entries()) {
    if (seen.has(name)) return { position: index + 1, name };
    seen.add(name);
  }
  return undefined;
}

export function parseKeyDocument(text: string): KeyDocument {
  const reading = readSecretObject(text);
  if (!reading.ok) throw new KeyDocumentError(`the secret ${reading.problem}`);
  const repeated = firstRepeatedMember(text);
  if (repeated !== undefined) {
    throw new KeyDocumentError(
      `the secret's entry #${repeated.position} repeats the id of ${appLabel(repeated.name)} named earlier; ` +
        'merge the two entries by hand',
    );
  }
  const document = new Map<string, DocumentApp>();
  for (const entry of reading.entries) {
    const app = readAppEntry(entry);
    const [problem] = app.problems;
    if (problem !== undefined) throw new MalformedEntryError(problem);
    if (app.appId === undefined) continue; // unreachable: an invalid app id is always a problem
    document.set(app.appId, {
      keys: app.keys.map((key) =>
        key.expires === undefined
          ? { stored: key.stored }
          : { stored: key.stored, expires: key.expires.text },
      ),
      ...(app.allowlist === undefined ? {} : { allowedCidrs: app.allowlist.texts }),
      ...(app.rateLimit === undefined ? {} : { rateLimit: app.rateLimit.written }),
    });
  }
  return document;
}

/** A key as the secret holds it: the bare string when it has no expiry, which is the shortest form. */
function serializeKey(key: DocumentKey): string | { key: string; expires: string } {
  return key.expires === undefined ? key.stored : { key: key.stored, expires: key.expires };
}

/**
 * Compact JSON (no indentation: Secrets Manager holds at most 65,536 bytes, and whitespace costs about 17% of them),
 * apps in a stable order so that two versions compare line for line once pretty-printed. An app is a list of keys,
 * or an app object when it has an allowlist or a rate limit of its own.
 */
export function serializeKeyDocument(document: KeyDocument): string {
  const sorted = [...document.entries()].sort(([a], [b]) => byCodeUnit(a, b));
  return JSON.stringify(Object.fromEntries(sorted.map(([appId, app]) => [appId, serializeApp(app)])));
}

function serializeApp(app: DocumentApp): unknown {
  const keys = app.keys.map(serializeKey);
  if (app.allowedCidrs === undefined && app.rateLimit === undefined) return keys;
  return {
    keys,
    ...(app.allowedCidrs === undefined ? {} : { allowedCidrs: app.allowedCidrs }),
    ...(app.rateLimit === undefined ? {} : { rateLimit: app.rateLimit }),
  };
}

export interface KeyListing {
  readonly keyId: string;
  /** As written in the secret. */
  readonly expires?: string;
  readonly expiresAt?: number;
  /** Only a digest of the key is kept (`sha256:`, or the compact `d:`), not the key itself. */
  readonly digest: boolean;
}

export interface AppListing {
  readonly appId: string;
  readonly keys: readonly KeyListing[];
  readonly allowedCidrs?: readonly string[];
  /** The app's own rate limit, as written; absent: the stack's default applies. */
  readonly rateLimit?: DocumentRateLimit;
}

/** Every app in code-unit order, with its key ids, expiries and allowlist; never a key. */
export function listApps(document: KeyDocument): AppListing[] {
  return [...document.entries()]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([appId, app]) => ({
      appId,
      keys: app.keys.map((key) => {
        const expiresAt = expiresAtOf(key);
        return {
          keyId: keyIdOf(key.stored),
          ...(key.expires === undefined || expiresAt === undefined
            ? {}
            : { expires: key.expires, expiresAt }),
          digest: isDigestForm(key.stored),
        };
      }),
      ...(app.allowedCidrs === undefined ? {} : { allowedCidrs: app.allowedCidrs }),
      ...(app.rateLimit === undefined ? {} : { rateLimit: app.rateLimit }),
    }));
}

export function appOf(document: KeyDocument, appId: string): DocumentApp {
  const app = document.get(appId);
  if (app === undefined) {
    throw new KeyDocumentError(
      isValidAppId(appId) ? `unknown app: ${appId}` : 'unknown app: its id is not valid',
    );
  }
  return app;
}

/** The document with `appId` set to `app`, or removed when `app` is undefined. */
export function withApp(document: KeyDocument, appId: string, app: DocumentApp | undefined): KeyDocument {
  const next = new Map(document);
  if (app === undefined) next.delete(appId);
  else next.set(appId, app);
  return next;
}

function assertValidKey(key: DocumentKey): void {
  keyIdOf(key.stored);
  if (key.expires !== undefined && parseTimestamp(key.expires) === undefined) {
    throw new KeyDocumentError('the expiry is not an RFC 3339 date-time with Z or an offset');
  }
}

export function addApp(document: KeyDocument, appId: string, key: DocumentKey): KeyDocument {
  assertValidAppId(appId);
  if (document.has(appId)) throw new KeyDocumentError(`app already exists: ${appId}`);
  assertValidKey(key);
  return withApp(document, appId, { keys: [key] });
}

/** Adds a key after the existing ones, which stay valid (until their own expiry) so clients can switch over. */
export function addKey(document: KeyDocument, appId: string, key: DocumentKey): KeyDocument {
  const app = appOf(document, appId);
  assertValidKey(key);
  const keyId = keyIdOf(key.stored);
  if (app.keys.some((existing) => keyIdOf(existing.stored) === keyId)) {
    throw new KeyDocumentError(`${appLabel(appId)} already has key ${keyId}`);
  }
  return withApp(document, appId, { ...app, keys: [...app.keys, key] });
}

export function revokeKey(
  document: KeyDocument,
  appId: string,
  keyId: string,
  options: { readonly force?: boolean } = {},
): KeyDocument {
  assertValidKeyId(keyId);
  const app = appOf(document, appId);
  const remaining = app.keys.filter((key) => keyIdOf(key.stored) !== keyId);
  if (remaining.length === app.keys.length)
    throw new KeyDocumentError(`${appLabel(appId)} has no key ${keyId}`);
  if (remaining.length === 0 && options.force !== true) {
    throw new KeyDocumentError(
      `key ${keyId} is the last key of ${appLabel(appId)}; use --force to remove it`,
    );
  }
  // An app without keys cannot be written (an empty key list is malformed), so with --force the app goes.
  return withApp(document, appId, remaining.length === 0 ? undefined : { ...app, keys: remaining });
}

export function removeApp(document: KeyDocument, appId: string): KeyDocument {
  appOf(document, appId);
  return withApp(document, appId, undefined);
}
