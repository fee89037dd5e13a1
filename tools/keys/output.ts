import type { AppListing, KeyListing } from '../../shared/keys/key-document';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { formatTimestamp } from '../../shared/keys/timestamp';
import {
  ownLimitOf,
  type EditResult,
  type ExpireResult,
  type LimitResult,
  type NetworkResult,
  type NewKeyResult,
  type PruneAppResult,
  type RevokeResult,
} from './changes';
import { formatRemaining } from './duration';

/**
 * What the key CLI prints on standard output, for people and (`--json`) for scripts. A key appears only as the
 * first line (or the `key` field) after add-app or rotate, the commands that create one. Instants are shown in
 * UTC, whatever offset an expiry was written with, so that they line up and compare as text.
 */

/** `expired`, or `expires in 3d`, relative to `now`. */
function expiryState(expiresAt: number, now: number): string {
  return expiresAt <= now ? 'expired' : `expires in ${formatRemaining(expiresAt - now)}`;
}

/** How an app's allowlist reads: a clear statement when it allows nothing at all. */
function networksOf(allowedCidrs: readonly string[] | undefined): string {
  if (allowedCidrs === undefined) return 'any network';
  if (allowedCidrs.length === 0) return 'no network (its allowlist is empty: every request is refused)';
  return `only ${allowedCidrs.join(' ')}`;
}

/** `20/s, burst 40`; a fraction as written (`0.5/s`). */
function limitText(limit: RateLimit): string {
  return `${limit.perSecond}/s, burst ${limit.burst}`;
}

/** What the CLI edits: a stack's secret, or the local server's key file. Each reads its default limit elsewhere. */
export type KeyStoreKind = 'secret' | 'file';

/** Where the default limit of an app without its own comes from, in the words of each store. */
const DEFAULT_LIMIT_WORDS: Readonly<
  Record<KeyStoreKind, { readonly setting: string; readonly named: string; readonly takesEffect: string }>
> = {
  secret: {
    setting: "the stack's appRateLimit",
    named: "the stack's default",
    takesEffect: "in effect within the key cache's TTL, where the stack has appRateLimit",
  },
  file: {
    setting: "the local server's APP_RATE_LIMIT",
    named: "the local server's default",
    takesEffect: 'in effect at once, where the local server runs with APP_RATE_LIMIT',
  },
};

/**
 * An app's rate limit and where it comes from. The CLI edits a secret or a key file, not what reads it: it knows the
 * default only when the operator names it (list --default-limit).
 */
function rateLimitOf(app: AppListing, defaultLimit: RateLimit | undefined, store: KeyStoreKind): string {
  if (app.rateLimit !== undefined) return `${limitText(ownLimitOf(app.rateLimit))} (this app's own)`;
  if (defaultLimit !== undefined) return `${limitText(defaultLimit)} (${DEFAULT_LIMIT_WORDS[store].named})`;
  return `${DEFAULT_LIMIT_WORDS[store].setting}, if set`;
}

/** What `limit` and `list --json` say of an app's rate limit. */
export type RateLimitJson =
  | {
      readonly perSecond: number;
      readonly burst: number;
      /** `app`: the app's own; `default`: the stack's, as given by list --default-limit. */
      readonly source: 'app' | 'default';
    }
  /** The stack's default applies, its value not known to the CLI. */
  | { readonly source: 'default' };

function rateLimitJson(own: RateLimit | undefined, defaultLimit: RateLimit | undefined): RateLimitJson {
  if (own !== undefined) return { ...own, source: 'app' };
  return defaultLimit === undefined ? { source: 'default' } : { ...defaultLimit, source: 'default' };
}

function formatLimit(result: LimitResult, store: KeyStoreKind): string {
  const { appId, rateLimit } = result;
  const words = DEFAULT_LIMIT_WORDS[store];
  if (rateLimit === undefined) {
    return `app ${appId}: no rate limit of its own; ${words.setting} applies, if set\n`;
  }
  return `app ${appId}: its own rate limit is now ${limitText(rateLimit)} (${words.takesEffect})\n`;
}

function formatNewKey(result: NewKeyResult): string {
  const stored = result.fresh.storage === 'plain' ? ' (stored in plain text: --plain)' : '';
  const expiry = result.expires === undefined ? '' : `, expiring ${result.expires}`;
  const created = `${result.fresh.keyId}${stored}${expiry}`;
  const what =
    result.command === 'add-app'
      ? `created with key ${created}`
      : `added key ${created}; valid keys: ${result.validKeyIds.join(' ')}`;
  const grace =
    result.othersExpireBy === undefined
      ? ''
      : result.othersExpired
        ? '; every other key has expired (list still shows them; prune removes them)'
        : `; every other key expires by ${result.othersExpireBy}`;
  return `${result.fresh.key}\napp ${result.appId}: ${what}${grace}; the key above is shown only this once\n`;
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

function formatExpire(result: ExpireResult, now: number): string {
  const { appId, keyId, expiresAt } = result;
  if (expiresAt === undefined) return `app ${appId}: key ${keyId} no longer expires\n`;
  const at = formatTimestamp(expiresAt);
  if (expiresAt <= now) {
    return `app ${appId}: key ${keyId} has expired (at ${at}); list still shows it, prune removes it\n`;
  }
  return `app ${appId}: key ${keyId} expires at ${at} (in ${formatRemaining(expiresAt - now)})\n`;
}

function formatPrune(result: PruneAppResult): string {
  if (result.removed.length === 0) {
    return result.appId === undefined ? 'no expired keys\n' : `app ${result.appId} has no expired keys\n`;
  }
  const byApp = new Map<string, string[]>();
  for (const { appId, keyId } of result.removed) byApp.set(appId, [...(byApp.get(appId) ?? []), keyId]);
  return [...byApp]
    .map(([appId, keyIdList]) => {
      const keyIds = keyIdList.join(' ');
      const plural = keyIdList.length === 1 ? 'key' : 'keys';
      const gone = result.removedApps.includes(appId)
        ? '; that was every key it had, so the app is removed'
        : '';
      return `app ${appId}: removed expired ${plural} ${keyIds}${gone}\n`;
    })
    .join('');
}

function formatNetworks(result: NetworkResult): string {
  const { appId, allowedCidrs } = result;
  if (allowedCidrs === undefined) return `app ${appId}: no allowlist; it may call from any network\n`;
  if (allowedCidrs.length === 0) {
    return (
      `app ${appId}: its allowlist is now empty, so it may call from no network: every request is refused ` +
      `(allow ${appId} <cidr> adds a network; allow ${appId} --any lifts the allowlist)\n`
    );
  }
  return `app ${appId}: may call only from ${allowedCidrs.join(' ')}\n`;
}

/**
 * Human output. `now` is the instant the command read its clock at: what "expired" and "in 3d" refer to. `store`:
 * what was edited, for the words on default limits.
 */
export function formatResult(result: EditResult, now: number, store: KeyStoreKind = 'secret'): string {
  switch (result.command) {
    case 'add-app':
    case 'rotate':
      return formatNewKey(result);
    case 'revoke':
      return formatRevoke(result);
    case 'remove-app':
      return `removed app ${result.appId}${
        result.removedKeyIds.length > 0 ? ` and its keys ${result.removedKeyIds.join(' ')}` : ''
      }\n`;
    case 'expire':
      return formatExpire(result, now);
    case 'prune':
      return formatPrune(result);
    case 'allow':
    case 'disallow':
      return formatNetworks(result);
    case 'limit':
      return formatLimit(result, store);
  }
}

/**
 * `--json`: one JSON value and a newline. add-app and rotate keep their `{appId, keyId, key}` and add `expires`
 * (the new key's) and `othersExpireBy` (rotate --grace) only when those were asked for.
 */
export function formatResultJson(result: EditResult, now: number): string {
  const json = (value: unknown): string => JSON.stringify(value) + '\n';
  switch (result.command) {
    case 'add-app':
    case 'rotate':
      return json({
        appId: result.appId,
        keyId: result.fresh.keyId,
        key: result.fresh.key,
        ...(result.expires === undefined ? {} : { expires: result.expires }),
        ...(result.othersExpireBy === undefined ? {} : { othersExpireBy: result.othersExpireBy }),
      });
    case 'revoke':
      return json({ appId: result.appId, revokedKeyId: result.keyId, keyIds: result.keyIds });
    case 'remove-app':
      return json({ appId: result.appId, removedKeyIds: result.removedKeyIds });
    case 'expire':
      return json({
        appId: result.appId,
        keyId: result.keyId,
        expires: result.expiresAt === undefined ? null : formatTimestamp(result.expiresAt),
        expired: result.expiresAt !== undefined && result.expiresAt <= now,
      });
    case 'prune':
      return json({ removed: result.removed, removedApps: result.removedApps });
    case 'allow':
    case 'disallow':
      return json({ appId: result.appId, allowedCidrs: result.allowedCidrs ?? null });
    case 'limit':
      return json({ appId: result.appId, rateLimit: rateLimitJson(result.rateLimit, undefined) });
  }
}

function formatKeyLine(key: KeyListing, now: number): string {
  const expiry =
    key.expiresAt === undefined
      ? 'never'
      : `${formatTimestamp(key.expiresAt)}  ${expiryState(key.expiresAt, now)}`;
  const digest = key.digest ? '  (stored as its sha256 digest)' : '';
  return `  ${key.keyId}  ${expiry}${digest}\n`;
}

/**
 * `list`: each app with the networks it may call from and its rate limit, then one line per key (oldest first): its
 * id, its expiry or `never`, and whether only its digest is stored. `defaultLimit`: the stack's (or, for a key file,
 * the local server's), when the operator named it.
 */
export function formatList(
  apps: readonly AppListing[],
  now: number,
  defaultLimit?: RateLimit,
  store: KeyStoreKind = 'secret',
): string {
  if (apps.length === 0) return 'no apps\n';
  return apps
    .map(
      (app) =>
        `${app.appId}: ${networksOf(app.allowedCidrs)}; rate limit: ${rateLimitOf(app, defaultLimit, store)}\n` +
        app.keys.map((key) => formatKeyLine(key, now)).join(''),
    )
    .join('');
}

/** The shape of `list --json`, documented in docs/keys.md; `keyIds` is kept for scripts written before expiry. */
export interface ListedAppJson {
  readonly appId: string;
  readonly keyIds: readonly string[];
  readonly keys: readonly {
    readonly keyId: string;
    /** UTC, or null when the key does not expire. */
    readonly expires: string | null;
    readonly expired: boolean;
    /** Only the key's sha256: digest is stored. */
    readonly digest: boolean;
  }[];
  /** null: any network; []: none. */
  readonly allowedCidrs: readonly string[] | null;
  readonly rateLimit: RateLimitJson;
}

export function listJson(
  apps: readonly AppListing[],
  now: number,
  defaultLimit?: RateLimit,
): ListedAppJson[] {
  return apps.map((app) => ({
    appId: app.appId,
    keyIds: app.keys.map((key) => key.keyId),
    keys: app.keys.map((key) => ({
      keyId: key.keyId,
      expires: key.expiresAt === undefined ? null : formatTimestamp(key.expiresAt),
      expired: key.expiresAt !== undefined && key.expiresAt <= now,
      digest: key.digest,
    })),
    allowedCidrs: app.allowedCidrs ?? null,
    rateLimit: rateLimitJson(
      app.rateLimit === undefined ? undefined : ownLimitOf(app.rateLimit),
      defaultLimit,
    ),
  }));
}

export function formatListJson(apps: readonly AppListing[], now: number, defaultLimit?: RateLimit): string {
  return JSON.stringify(listJson(apps, now, defaultLimit)) + '\n';
}
