import {
  addApp,
  addKey,
  appOf,
  expiresAtOf,
  isExpired,
  keyIdOf,
  removeApp,
  revokeKey,
  type DocumentKey,
  type DocumentRateLimit,
  type KeyDocument,
} from '../../shared/keys/key-document';
import { toCompactDigestForm } from '../../shared/keys/key-material';
import {
  allowAnyNetwork,
  allowCidrs,
  disallowCidrs,
  listsCidr,
  limitOtherKeysExpiry,
  pruneExpiredKeys,
  setKeyExpiry,
  setRateLimit,
  useDefaultRateLimit,
  type PrunedKey,
} from '../../shared/keys/key-rules';
import { defaultBurst, type RateLimit } from '../../shared/keys/rate-limit';
import { formatTimestamp } from '../../shared/keys/timestamp';
import type { AppEdit, Change } from './engine';

/**
 * The key CLI's edits of one app, each a pure Change (see engine.ts) over the app's part of its shard: the clock
 * comes in as `now`, read once per command so that every retry writes the same instants. editOf is the one place a
 * request (a command's, or a change file's) becomes a change.
 */

/** An expiry as a new key's request gives it: a span from now, or an instant. */
export type ExpirySpec =
  { readonly kind: 'in'; readonly ms: number } | { readonly kind: 'at'; readonly at: number };

/** How `expire` changes a key's expiry: a span from now, an instant, or no expiry at all. */
export type ExpiryChange = ExpirySpec | { readonly kind: 'never' };

/** What `limit` gives an app: a limit of its own (a burst left out is not written), or the stack's default again. */
export type LimitChange = DocumentRateLimit | 'default';

/**
 * How a new key is stored: only its compact digest (`d:`, the default), so that the secret holds nothing that
 * authenticates; or the key itself (`--plain`), only on purpose.
 */
export type KeyStorage = 'digest' | 'plain';

/** One edit of one app, as a command or a change file asks for it. */
export type EditRequest = { readonly appId: string } & (
  | {
      readonly op: 'add';
      readonly storage: KeyStorage;
      readonly expiry?: ExpirySpec;
      readonly allowedCidrs?: readonly string[];
      readonly rateLimit?: DocumentRateLimit;
    }
  | {
      readonly op: 'rotate';
      readonly storage: KeyStorage;
      readonly expiry?: ExpirySpec;
      /** Every other key of the app then expires by now + this. */
      readonly graceMs?: number;
    }
  | { readonly op: 'revoke'; readonly keyId: string; readonly force: boolean }
  | { readonly op: 'remove' }
  | { readonly op: 'expire'; readonly keyId: string; readonly expiry: ExpiryChange }
  | { readonly op: 'prune' }
  | { readonly op: 'network'; readonly network: NetworkChange }
  | { readonly op: 'limit'; readonly limit: LimitChange }
);

/** A key made for add-app or rotate: `key` goes to the operator once, `storedKey` into the document. */
export interface FreshKey {
  readonly key: string;
  readonly storedKey: string;
  readonly keyId: string;
  readonly storage: KeyStorage;
}

export function freshKey(key: string, storage: KeyStorage = 'digest'): FreshKey {
  const storedKey = storage === 'digest' ? toCompactDigestForm(key) : key;
  return { key, storedKey, keyId: keyIdOf(storedKey), storage };
}

/** The key ids of an app, oldest first; none when the app is not there. */
function keyIdsOf(document: KeyDocument, appId: string): string[] {
  return (document.get(appId)?.keys ?? []).map((key) => keyIdOf(key.stored));
}

export interface NewKeyRequest {
  readonly command: 'add-app' | 'rotate';
  readonly appId: string;
  readonly fresh: FreshKey;
  readonly now: number;
  /** The new key's own expiry (epoch ms); absent: it does not expire. */
  readonly expiresAt?: number;
  /** rotate --grace: every other key of the app expires at the earlier of its own expiry and this. */
  readonly othersExpireBy?: number;
}

export interface NewKeyResult {
  readonly command: 'add-app' | 'rotate';
  readonly appId: string;
  readonly fresh: FreshKey;
  /** All of the app's key ids afterwards, oldest first. */
  readonly keyIds: readonly string[];
  /** Those not expired at the command's `now`. */
  readonly validKeyIds: readonly string[];
  /** The new key's expiry, as written. */
  readonly expires?: string;
  /** rotate --grace: the instant every other key expires by, as written. */
  readonly othersExpireBy?: string;
  /** rotate --grace 0s: every other key has expired at once. */
  readonly othersExpired: boolean;
}

/**
 * add-app and rotate. The fresh key is made once, outside the change, so every retry stores the same key (and the
 * same expiries). A document that already holds it means our own earlier attempt landed (its answer was lost):
 * done, grace included, since both were one write.
 */
export function newKeyChange(request: NewKeyRequest): Change<NewKeyResult> {
  const { command, appId, fresh, now, expiresAt, othersExpireBy } = request;
  const key: DocumentKey =
    expiresAt === undefined
      ? { stored: fresh.storedKey }
      : { stored: fresh.storedKey, expires: formatTimestamp(expiresAt) };
  return (document) => {
    // Each key id is a digest of its key: made once per key here, since apply makes 100,000 of these.
    const before = keyIdsOf(document, appId);
    let next: KeyDocument | undefined;
    if (!before.includes(fresh.keyId)) {
      next = command === 'add-app' ? addApp(document, appId, key) : addKey(document, appId, key);
      if (othersExpireBy !== undefined) next = limitOtherKeysExpiry(next, appId, fresh.keyId, othersExpireBy);
    }
    // The new key goes after the others, which keep their order.
    const keyIds = next === undefined ? before : [...before, fresh.keyId];
    const keys = (next ?? document).get(appId)?.keys ?? [];
    return {
      next,
      result: {
        command,
        appId,
        fresh,
        keyIds,
        validKeyIds: keyIds.filter((_, position) => {
          const stored = keys[position];
          return stored !== undefined && !isExpired(stored, now);
        }),
        ...(key.expires === undefined ? {} : { expires: key.expires }),
        ...(othersExpireBy === undefined ? {} : { othersExpireBy: formatTimestamp(othersExpireBy) }),
        othersExpired: othersExpireBy !== undefined && othersExpireBy <= now,
      },
    };
  };
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

export interface RemoveAppResult {
  readonly command: 'remove-app';
  readonly appId: string;
  readonly removedKeyIds: readonly string[];
}

export function removeAppChange(appId: string): Change<RemoveAppResult> {
  return (document, { isRetry }) => {
    const next = isRetry && !document.has(appId) ? undefined : removeApp(document, appId);
    return { next, result: { command: 'remove-app', appId, removedKeyIds: keyIdsOf(document, appId) } };
  };
}

export interface ExpireResult {
  readonly command: 'expire';
  readonly appId: string;
  readonly keyId: string;
  /** The key's expiry afterwards (epoch ms); absent: it no longer expires. */
  readonly expiresAt?: number;
}

/** `expire`: sets one key's expiry to `at` (epoch ms), or clears it with undefined. The same on every retry. */
export function expireChange(appId: string, keyId: string, at: number | undefined): Change<ExpireResult> {
  return (document) => {
    const next = setKeyExpiry(document, appId, keyId, at);
    const key = appOf(next, appId).keys.find((candidate) => keyIdOf(candidate.stored) === keyId);
    const expiresAt = key === undefined ? undefined : expiresAtOf(key);
    return {
      next,
      result: { command: 'expire', appId, keyId, ...(expiresAt === undefined ? {} : { expiresAt }) },
    };
  };
}

export interface PruneAppResult {
  readonly command: 'prune';
  /** The one app pruned; absent: all of them. */
  readonly appId?: string;
  readonly removed: readonly PrunedKey[];
  /** Apps removed because every key they had had expired. */
  readonly removedApps: readonly string[];
}

/** `prune`: removes the keys expired at `now`, of one app or of all. Nothing expired: nothing is written. */
export function pruneChange(now: number, appId?: string): Change<PruneAppResult> {
  return (document) => {
    const pruned = pruneExpiredKeys(document, now, appId);
    return {
      next: pruned.removed.length === 0 ? undefined : pruned.document,
      result: {
        command: 'prune',
        ...(appId === undefined ? {} : { appId }),
        removed: pruned.removed,
        removedApps: pruned.removedApps,
      },
    };
  };
}

/** What an allowlist edit asks for. */
export type NetworkChange =
  | { readonly kind: 'allow'; readonly cidrs: readonly string[] }
  | { readonly kind: 'allow-any' }
  | { readonly kind: 'disallow'; readonly cidrs: readonly string[] };

export interface NetworkResult {
  readonly command: 'allow' | 'disallow';
  readonly appId: string;
  /** The app's allowlist afterwards; absent: any network. Empty: none. */
  readonly allowedCidrs?: readonly string[];
}

/**
 * `allow`, `allow --any` and `disallow`. On a retry, blocks another writer (or our own lost-answer write) has
 * already removed are the state asked for: only those still listed are removed, and none left means done.
 */
export function networkChange(appId: string, change: NetworkChange): Change<NetworkResult> {
  return (document, { isRetry }) => {
    let next: KeyDocument | undefined;
    switch (change.kind) {
      case 'allow':
        next = allowCidrs(document, appId, change.cidrs);
        break;
      case 'allow-any':
        next = allowAnyNetwork(document, appId);
        break;
      case 'disallow': {
        // listsCidr: in any spelling.
        const listed = (cidr: string) => listsCidr(appOf(document, appId), cidr);
        const cidrs = isRetry ? change.cidrs.filter(listed) : change.cidrs;
        next = cidrs.length === 0 ? undefined : disallowCidrs(document, appId, cidrs);
        break;
      }
    }
    const allowedCidrs = appOf(next ?? document, appId).allowedCidrs;
    return {
      next,
      result: {
        command: change.kind === 'disallow' ? 'disallow' : 'allow',
        appId,
        ...(allowedCidrs === undefined ? {} : { allowedCidrs }),
      },
    };
  };
}

/** The limit an app's own `rateLimit` sets: a burst left out is filled in as the secret's reader fills it. */
export function ownLimitOf(written: DocumentRateLimit): RateLimit {
  return { perSecond: written.perSecond, burst: written.burst ?? defaultBurst(written.perSecond) };
}

export interface LimitResult {
  readonly command: 'limit';
  readonly appId: string;
  /** The app's own limit afterwards (see ownLimitOf); absent: the stack's default applies. */
  readonly rateLimit?: RateLimit;
}

/**
 * `limit`: gives the app a rate limit of its own, or removes it so that the stack's default applies again. The
 * same on every retry: another writer's newer document gets the same limit.
 */
export function limitChange(appId: string, change: LimitChange): Change<LimitResult> {
  return (document) => {
    const next =
      change === 'default' ? useDefaultRateLimit(document, appId) : setRateLimit(document, appId, change);
    const written = appOf(next, appId).rateLimit;
    return {
      next,
      result: {
        command: 'limit',
        appId,
        ...(written === undefined ? {} : { rateLimit: ownLimitOf(written) }),
      },
    };
  };
}

export type EditResult =
  NewKeyResult | RevokeResult | RemoveAppResult | ExpireResult | PruneAppResult | NetworkResult | LimitResult;

/**
 * `now` plus `ms` in whole seconds (rounded down, so a key never outlives what was asked): expiries then read
 * `2026-12-24T00:00:00Z`, not `...00.123Z`.
 */
export function after(now: number, ms: number): number {
  return Math.floor((now + ms) / 1_000) * 1_000;
}

function instantOf(expiry: ExpirySpec | undefined, now: number): number | undefined {
  if (expiry === undefined) return undefined;
  return expiry.kind === 'in' ? after(now, expiry.ms) : expiry.at;
}

/** Several changes of one app as one; its result is the first change's. */
function composed(first: Change<EditResult>, rest: readonly Change<EditResult>[]): Change<EditResult> {
  return (document, context) => {
    const outcome = first(document, context);
    let current = outcome.next;
    for (const change of rest) current = change(current ?? document, context).next ?? current;
    return { next: current, result: outcome.result };
  };
}

function newKeyEdit(
  request: Extract<EditRequest, { op: 'add' | 'rotate' }>,
  fresh: FreshKey,
  now: number,
): Change<EditResult> {
  const expiresAt = instantOf(request.expiry, now);
  const othersExpireBy =
    request.op === 'rotate' && request.graceMs !== undefined ? after(now, request.graceMs) : undefined;
  const key = newKeyChange({
    command: request.op === 'add' ? 'add-app' : 'rotate',
    appId: request.appId,
    fresh,
    now,
    ...(expiresAt === undefined ? {} : { expiresAt }),
    ...(othersExpireBy === undefined ? {} : { othersExpireBy }),
  });
  if (request.op === 'rotate') return key;
  const { allowedCidrs, rateLimit } = request;
  // Most adds are a key alone: no second closure to hold for each of 100,000.
  if (allowedCidrs === undefined && rateLimit === undefined) return key;
  return composed(key, [
    ...(allowedCidrs === undefined
      ? []
      : [networkChange(request.appId, { kind: 'allow', cidrs: allowedCidrs })]),
    ...(rateLimit === undefined ? [] : [limitChange(request.appId, rateLimit)]),
  ]);
}

/** The change a request makes. A new key is made here, once, so every retry stores (and prints) the same key. */
export function editOf(request: EditRequest, newKey: () => string, now: number): AppEdit<EditResult> {
  const { appId } = request;
  const edit = (change: Change<EditResult>): AppEdit<EditResult> => ({ appId, change });
  switch (request.op) {
    case 'add':
    case 'rotate':
      return edit(newKeyEdit(request, freshKey(newKey(), request.storage), now));
    case 'revoke':
      return edit(revokeChange(appId, request.keyId, request.force));
    case 'remove':
      return edit(removeAppChange(appId));
    case 'expire':
      return edit(
        expireChange(
          appId,
          request.keyId,
          request.expiry.kind === 'never' ? undefined : instantOf(request.expiry, now),
        ),
      );
    case 'prune':
      return edit(pruneChange(now, appId));
    case 'network':
      return edit(networkChange(appId, request.network));
    case 'limit':
      return edit(limitChange(appId, request.limit));
  }
}
