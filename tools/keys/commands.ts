import {
  addApp,
  addKey,
  keyIdOf,
  removeApp,
  revokeKey,
  type AppKeyIds,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { toDigestForm } from '../../shared/keys/key-material';
import type { Change } from './edit';

/** A key made for add-app or rotate: `key` goes to the operator once, `storedKey` into the document. */
export interface FreshKey {
  readonly key: string;
  readonly storedKey: string;
  readonly keyId: string;
}

export function freshKey(key: string, hash: boolean): FreshKey {
  const storedKey = hash ? toDigestForm(key) : key;
  return { key, storedKey, keyId: keyIdOf(storedKey) };
}

export interface NewKeyResult {
  readonly command: 'add-app' | 'rotate';
  readonly appId: string;
  readonly fresh: FreshKey;
  readonly hashed: boolean;
  /** All of the app's key ids afterwards, oldest first. */
  readonly keyIds: readonly string[];
}

export interface RevokeResult {
  readonly command: 'revoke';
  readonly appId: string;
  readonly keyId: string;
  readonly keyIds: readonly string[];
  /**
   * What this command did: revoked the key, or revoked the app's last key so the app went with it; or, on a
   * retry, found that another writer had already revoked the key or removed the whole app, and did nothing.
   */
  readonly outcome: 'revoked' | 'app-removed' | 'key-already-gone' | 'app-already-gone';
}

export interface RemoveAppResult {
  readonly command: 'remove-app';
  readonly appId: string;
  readonly removedKeyIds: readonly string[];
}

export type EditResult = NewKeyResult | RevokeResult | RemoveAppResult;

function keyIdsOf(document: KeyDocument, appId: string): string[] {
  return (document.get(appId) ?? []).map(keyIdOf);
}

/**
 * add-app and rotate. The fresh key is made once, outside the change, so every retry stores the same key.
 * A document that already holds it means our own earlier attempt landed (its answer was lost): done.
 */
export function newKeyChange(
  command: 'add-app' | 'rotate',
  appId: string,
  fresh: FreshKey,
  hashed: boolean,
): Change<NewKeyResult> {
  return (document) => {
    const alreadyStored = keyIdsOf(document, appId).includes(fresh.keyId);
    const next = alreadyStored
      ? undefined
      : command === 'add-app'
        ? addApp(document, appId, fresh.storedKey)
        : addKey(document, appId, fresh.storedKey);
    return { next, result: { command, appId, fresh, hashed, keyIds: keyIdsOf(next ?? document, appId) } };
  };
}

/**
 * Refuses an unknown app or key on the first attempt. On a retry, an app or key that is gone was removed by a
 * concurrent writer (or by our own lost-answer write): that is the state asked for, so nothing is written, and
 * the result says it was already gone rather than claiming a revoke.
 */
export function revokeChange(appId: string, keyId: string, force: boolean): Change<RevokeResult> {
  return (document, { isRetry }) => {
    const result = (after: KeyDocument, outcome: RevokeResult['outcome']): RevokeResult => ({
      command: 'revoke',
      appId,
      keyId,
      keyIds: keyIdsOf(after, appId),
      outcome,
    });
    if (isRetry && !document.has(appId)) {
      return { next: undefined, result: result(document, 'app-already-gone') };
    }
    if (isRetry && !keyIdsOf(document, appId).includes(keyId)) {
      return { next: undefined, result: result(document, 'key-already-gone') };
    }
    const next = revokeKey(document, appId, keyId, { force });
    return { next, result: result(next, next.has(appId) ? 'revoked' : 'app-removed') };
  };
}

export function removeAppChange(appId: string): Change<RemoveAppResult> {
  return (document, { isRetry }) => {
    const next = isRetry && !document.has(appId) ? undefined : removeApp(document, appId);
    return { next, result: { command: 'remove-app', appId, removedKeyIds: keyIdsOf(document, appId) } };
  };
}

function formatRevoke(result: RevokeResult): string {
  const { appId, keyId, keyIds } = result;
  switch (result.outcome) {
    case 'revoked':
      return `app ${appId}: revoked key ${keyId}; valid keys: ${keyIds.join(' ')}\n`;
    case 'app-removed':
      return `app ${appId}: revoked key ${keyId}, its last key; the app is removed\n`;
    case 'key-already-gone':
      return `app ${appId}: key ${keyId} is already revoked; valid keys: ${keyIds.join(' ')}\n`;
    case 'app-already-gone':
      return `app ${appId} is already gone; nothing to revoke\n`;
  }
}

/** Human output. The only place a key appears: the first line after add-app or rotate. */
export function formatResult(result: EditResult): string {
  switch (result.command) {
    case 'add-app':
    case 'rotate': {
      const stored = result.hashed ? ' (stored as its sha256 digest)' : '';
      const what =
        result.command === 'add-app'
          ? `created with key ${result.fresh.keyId}${stored}`
          : `added key ${result.fresh.keyId}${stored}; valid keys: ${result.keyIds.join(' ')}`;
      return `${result.fresh.key}\napp ${result.appId}: ${what}; the key above is shown only this once\n`;
    }
    case 'revoke':
      return formatRevoke(result);
    case 'remove-app':
      return `removed app ${result.appId}${
        result.removedKeyIds.length > 0 ? ` and its keys ${result.removedKeyIds.join(' ')}` : ''
      }\n`;
  }
}

export function formatResultJson(result: EditResult): string {
  switch (result.command) {
    case 'add-app':
    case 'rotate':
      return JSON.stringify({ appId: result.appId, keyId: result.fresh.keyId, key: result.fresh.key }) + '\n';
    case 'revoke':
      return (
        JSON.stringify({ appId: result.appId, revokedKeyId: result.keyId, keyIds: result.keyIds }) + '\n'
      );
    case 'remove-app':
      return JSON.stringify({ appId: result.appId, removedKeyIds: result.removedKeyIds }) + '\n';
  }
}

export function formatList(apps: readonly AppKeyIds[]): string {
  if (apps.length === 0) return 'no apps\n';
  return apps.map(({ appId, keyIds }) => `${appId}: ${keyIds.join(' ')}\n`).join('');
}

export function formatListJson(apps: readonly AppKeyIds[]): string {
  return JSON.stringify(apps.map(({ appId, keyIds }) => ({ appId, keyIds }))) + '\n';
}
