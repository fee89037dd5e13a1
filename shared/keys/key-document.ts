import { appIdProblem, isValidAppId } from './app-id';
import {
  describeKeyringProblem,
  describeKeyringProblemWithApp,
  readSecretEntry,
  type KeyringProblem,
} from './keyring';
import {
  DIGEST_PREFIX,
  INVALID_KEY_ID_MESSAGE,
  isKeyId,
  keyIdFromDigest,
  readStoredKey,
} from './key-material';
import { memberNamesInTextOrder, readSecretObject } from './secret-json';

/**
 * The secret as operators edit it: App-id → stored keys (plain or `sha256:`), oldest first. Unlike
 * parseKeyring, which serves traffic and skips bad entries, this is strict: a tool that rewrites the secret
 * must not silently drop an entry it did not understand.
 */
export type KeyDocument = ReadonlyMap<string, readonly string[]>;

export interface AppKeyIds {
  readonly appId: string;
  readonly keyIds: readonly string[];
}

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
function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function assertValidAppId(appId: string): void {
  const problem = appIdProblem(appId);
  if (problem !== undefined) throw new KeyDocumentError(`invalid app id: ${problem}`);
}

/** `app demo`, or a stand-in for an id that is not valid: such a string is never repeated. */
function appLabel(appId: string): string {
  return isValidAppId(appId) ? `app ${appId}` : 'an app with an invalid id';
}

/** The key id (fingerprint) of a stored key; the same for a key and its `sha256:` form. */
export function keyIdOf(storedKey: string): string {
  const reading = readStoredKey(storedKey);
  if (!reading.ok) throw new KeyDocumentError(`stored key is malformed: ${reading.reason}`);
  return keyIdFromDigest(reading.digest);
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
  const document = new Map<string, string[]>();
  for (const entry of reading.entries) {
    const { appId, keys, problems } = readSecretEntry(entry);
    const [problem] = problems;
    if (problem !== undefined) throw new MalformedEntryError(problem);
    if (appId === undefined) continue; // unreachable: an invalid app id is always a problem
    document.set(
      appId,
      keys.map((key) => key.stored),
    );
  }
  return document;
}

/** Always writes lists, in a stable order, so diffs between versions stay readable. */
export function serializeKeyDocument(document: KeyDocument): string {
  const sorted = [...document.entries()].sort(([a], [b]) => byCodeUnit(a, b));
  return JSON.stringify(Object.fromEntries(sorted), null, 2) + '\n';
}

export function listKeyIds(document: KeyDocument): AppKeyIds[] {
  return [...document.entries()]
    .sort(([a], [b]) => byCodeUnit(a, b))
    .map(([appId, keys]) => ({ appId, keyIds: keys.map(keyIdOf) }));
}

function keysOf(document: KeyDocument, appId: string): readonly string[] {
  const keys = document.get(appId);
  if (keys === undefined) {
    throw new KeyDocumentError(
      isValidAppId(appId) ? `unknown app: ${appId}` : 'unknown app: its id is not valid',
    );
  }
  return keys;
}

function withApp(document: KeyDocument, appId: string, keys: readonly string[] | undefined): KeyDocument {
  const next = new Map(document);
  if (keys === undefined) next.delete(appId);
  else next.set(appId, keys);
  return next;
}

export function addApp(document: KeyDocument, appId: string, storedKey: string): KeyDocument {
  assertValidAppId(appId);
  if (document.has(appId)) throw new KeyDocumentError(`app already exists: ${appId}`);
  keyIdOf(storedKey);
  return withApp(document, appId, [storedKey]);
}

/** Adds a key after the existing ones, which stay valid so clients can switch over. */
export function addKey(document: KeyDocument, appId: string, storedKey: string): KeyDocument {
  const keys = keysOf(document, appId);
  const keyId = keyIdOf(storedKey);
  if (keys.some((key) => keyIdOf(key) === keyId))
    throw new KeyDocumentError(`${appLabel(appId)} already has key ${keyId}`);
  return withApp(document, appId, [...keys, storedKey]);
}

export function revokeKey(
  document: KeyDocument,
  appId: string,
  keyId: string,
  options: { readonly force?: boolean } = {},
): KeyDocument {
  // Checked first and never echoed: an operator may have pasted a key where the key id belongs.
  if (!isKeyId(keyId)) throw new KeyDocumentError(INVALID_KEY_ID_MESSAGE);
  const keys = keysOf(document, appId);
  const remaining = keys.filter((key) => keyIdOf(key) !== keyId);
  if (remaining.length === keys.length) throw new KeyDocumentError(`${appLabel(appId)} has no key ${keyId}`);
  if (remaining.length === 0 && options.force !== true) {
    throw new KeyDocumentError(
      `key ${keyId} is the last key of ${appLabel(appId)}; use --force to remove it`,
    );
  }
  // With --force the app stays, keyless, only if we could express that; an empty list is invalid, so the app goes.
  return withApp(document, appId, remaining.length === 0 ? undefined : remaining);
}

export function removeApp(document: KeyDocument, appId: string): KeyDocument {
  keysOf(document, appId);
  return withApp(document, appId, undefined);
}

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
export function holdsDigestKey(keys: readonly string[]): boolean {
  return keys.some((key) => key.startsWith(DIGEST_PREFIX));
}

/**
 * One scheduled rotation: every app gets one fresh key from `newKey`, appended after its keys (newest last),
 * and keeps at most `keep` newest keys, so the key before the fresh one stays valid for one more period.
 */
export function rotateAllApps(document: KeyDocument, keep: number, newKey: () => string): RotatedDocument {
  assertValidRotationKeep(keep);
  let next = document;
  const rotatedAppIds: string[] = [];
  const skippedAppIds: string[] = [];
  for (const appId of [...document.keys()].sort(byCodeUnit)) {
    if (holdsDigestKey(keysOf(document, appId))) {
      skippedAppIds.push(appId);
      continue;
    }
    const withFreshKey = addKey(next, appId, newKey());
    next = withApp(withFreshKey, appId, keysOf(withFreshKey, appId).slice(-keep));
    rotatedAppIds.push(appId);
  }
  return { document: next, rotatedAppIds, skippedAppIds };
}
