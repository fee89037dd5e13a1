import { shardOf } from './shard';

/**
 * The key registry: the keys of every app, spread over `shards` secrets (or files) by shardOf(appId, shards). One
 * shard is today's single secret; more let one deployment hold tens of thousands of apps, since one secret value
 * holds at most 65,536 bytes.
 *
 * While a reshard is under way the layout also names `previousShards`, the count apps were placed by before: a
 * reader looks for an app in its home under `shards` first, then in its home under `previousShards`, so an app not
 * yet moved is still found. Writers (the key CLI's reshard) write only the new home.
 */

export const KEY_SHARDS_LIMITS = { min: 1, max: 1_024 } as const;

export const KEY_SHARDS_RULE = `a whole number from ${KEY_SHARDS_LIMITS.min} to ${KEY_SHARDS_LIMITS.max}`;

/** Why a shard count is refused, phrased to follow its name; undefined when it is valid. */
export function shardCountProblem(value: number): string | undefined {
  const { min, max } = KEY_SHARDS_LIMITS;
  return Number.isInteger(value) && value >= min && value <= max ? undefined : `must be ${KEY_SHARDS_RULE}`;
}

export interface RegistryLayout {
  /** How apps are placed now: shardOf(appId, shards). */
  readonly shards: number;
  /** While a reshard is under way: how they were placed before. Absent: no reshard under way. */
  readonly previousShards?: number;
  /**
   * Where each shard is, by index: a secret id (ARN or name) or a file path. One for every index either count
   * uses: max(shards, previousShards).
   */
  readonly shardIds: readonly string[];
}

/** How many shards a layout names: every index either count uses. */
export function shardSlots(layout: Pick<RegistryLayout, 'shards' | 'previousShards'>): number {
  return Math.max(layout.shards, layout.previousShards ?? 0);
}

/** What is wrong with a layout, in one line; undefined when it is valid. */
export function layoutProblem(layout: RegistryLayout): string | undefined {
  const shardsProblem = shardCountProblem(layout.shards);
  if (shardsProblem !== undefined) return `shards ${shardsProblem}, got ${layout.shards}`;
  if (layout.previousShards !== undefined) {
    const previousProblem = shardCountProblem(layout.previousShards);
    if (previousProblem !== undefined) {
      return `previousShards ${previousProblem}, got ${layout.previousShards}`;
    }
    if (layout.previousShards === layout.shards) {
      return 'previousShards must differ from shards (leave it out when no reshard is under way)';
    }
  }
  const slots = shardSlots(layout);
  if (layout.shardIds.length !== slots) {
    return `shardIds must name ${slots} shard${slots === 1 ? '' : 's'}, got ${layout.shardIds.length}`;
  }
  const empty = layout.shardIds.findIndex((id) => typeof id !== 'string' || id === '');
  if (empty !== -1) return `shardIds[${empty}] must be a non-empty string`;
  if (new Set(layout.shardIds).size !== layout.shardIds.length) return 'shardIds must all differ';
  return undefined;
}

/**
 * The shards to look in for `appId`, in order: its home now, then, while a reshard is under way and it differs,
 * its home before. Readers stop at the first that holds the app.
 */
export function shardsToSearch(
  layout: Pick<RegistryLayout, 'shards' | 'previousShards'>,
  appId: string,
): readonly number[] {
  const home = shardOf(appId, layout.shards);
  if (layout.previousShards === undefined) return [home];
  const previousHome = shardOf(appId, layout.previousShards);
  return previousHome === home ? [home] : [home, previousHome];
}

/**
 * Secret names of a registry the stack created, under one prefix: shard `i` (from 1) is `<prefix>shard-<i>`, and
 * the manifest is `<prefix>registry`. Shard 0 is the stack's original keys secret (or the operator's
 * `keysSecretArn`), whatever its name, so a deployment that grows from one secret keeps it.
 */
export function registryNamePrefix(stackName: string): string {
  return `payment-api/${stackName}/keys/`;
}

export function shardSecretName(prefix: string, index: number): string {
  return `${prefix}shard-${index}`;
}

export function registryManifestName(prefix: string): string {
  return `${prefix}registry`;
}

/** The layout of a registry in Secrets Manager: shard 0 by its id, the others by name under `namePrefix`. */
export function secretRegistryLayout(options: {
  readonly shardZeroId: string;
  readonly namePrefix: string;
  readonly shards: number;
  readonly previousShards?: number;
}): RegistryLayout {
  const { shardZeroId, namePrefix, shards, previousShards } = options;
  const slots = shardSlots({ shards, ...(previousShards === undefined ? {} : { previousShards }) });
  return {
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
    shardIds: Array.from({ length: slots }, (_, index) =>
      index === 0 ? shardZeroId : shardSecretName(namePrefix, index),
    ),
  };
}

/** The single-secret (or single-file) registry: one shard, today's layout. */
export function singleShardLayout(id: string): RegistryLayout {
  return { shards: 1, shardIds: [id] };
}

/**
 * Environment variables every function that reads the registry gets from the stack (payment, rotation, monitor),
 * and the local server reads. KEYS_SECRET_ID names shard 0, as it named the one secret before shards existed.
 */
export const REGISTRY_ENV = {
  shardZero: 'KEYS_SECRET_ID',
  shards: 'KEY_SHARDS',
  previousShards: 'KEY_SHARDS_PREVIOUS',
  namePrefix: 'KEY_SHARD_NAME_PREFIX',
} as const;

type Environment = Readonly<Record<string, string | undefined>>;

function readShardCount(env: Environment, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  const problem = shardCountProblem(value);
  if (problem !== undefined) throw new Error(`${name} ${problem}, got "${raw}"`);
  return value;
}

/**
 * The registry a function was deployed with. Without KEY_SHARDS: today's single secret. Throws one line naming the
 * variable for anything missing or invalid, so a bad environment fails the function's start instead of serving.
 */
export function readRegistryLayout(env: Environment): RegistryLayout {
  const shardZeroId = env[REGISTRY_ENV.shardZero];
  if (shardZeroId === undefined || shardZeroId === '') {
    throw new Error(`${REGISTRY_ENV.shardZero} must name the keys secret`);
  }
  const shards = readShardCount(env, REGISTRY_ENV.shards) ?? 1;
  const previousShards = readShardCount(env, REGISTRY_ENV.previousShards);
  if (shards === 1 && previousShards === undefined) return singleShardLayout(shardZeroId);
  const namePrefix = env[REGISTRY_ENV.namePrefix];
  if (namePrefix === undefined || namePrefix === '') {
    throw new Error(`${REGISTRY_ENV.namePrefix} must be set when ${REGISTRY_ENV.shards} is above 1`);
  }
  const layout = secretRegistryLayout({
    shardZeroId,
    namePrefix,
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
  });
  const problem = layoutProblem(layout);
  if (problem !== undefined) throw new Error(`key registry: ${problem}`);
  return layout;
}

/**
 * The manifest: what a registry's layout is, stored where the key CLI can read it in one call (the secret
 * `<prefix>registry`, written by the stack at each deploy, or a local `registry.json` beside its shard files).
 * Strict: an unknown field refuses it, since a reader that guessed the layout would look in the wrong place.
 */
export const REGISTRY_MANIFEST_FORMAT = 'payment-api-key-registry/1';

export interface RegistryManifest extends RegistryLayout {
  /** The payment Lambda's key cache TTL: how long a reshard waits before it removes moved apps' old copies. */
  readonly keyCacheTtlSeconds?: number;
}

const MANIFEST_FIELDS = ['format', 'shards', 'previousShards', 'shardIds', 'keyCacheTtlSeconds'] as const;

export type ManifestReading =
  | { readonly ok: true; readonly manifest: RegistryManifest }
  | { readonly ok: false; readonly problem: string };

/** Reads a manifest's text; the problem is one line that never quotes the text. */
export function parseRegistryManifest(text: string): ManifestReading {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { ok: false, problem: 'the registry manifest is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return { ok: false, problem: 'the registry manifest must be a JSON object' };
  }
  const fields = parsed as Readonly<Record<string, unknown>>;
  const unknown = Object.keys(fields).find(
    (field) => !(MANIFEST_FIELDS as readonly string[]).includes(field),
  );
  if (unknown !== undefined) {
    return { ok: false, problem: `the registry manifest has an unknown field "${unknown.slice(0, 40)}"` };
  }
  if (fields.format !== REGISTRY_MANIFEST_FORMAT) {
    return { ok: false, problem: `the registry manifest's "format" must be "${REGISTRY_MANIFEST_FORMAT}"` };
  }
  const { shards, previousShards, shardIds, keyCacheTtlSeconds } = fields;
  if (typeof shards !== 'number')
    return { ok: false, problem: 'the registry manifest\'s "shards" must be a number' };
  if (previousShards !== undefined && typeof previousShards !== 'number') {
    return { ok: false, problem: 'the registry manifest\'s "previousShards" must be a number' };
  }
  if (!Array.isArray(shardIds) || !shardIds.every((id): id is string => typeof id === 'string')) {
    return { ok: false, problem: 'the registry manifest\'s "shardIds" must be a list of strings' };
  }
  if (
    keyCacheTtlSeconds !== undefined &&
    !(
      typeof keyCacheTtlSeconds === 'number' &&
      Number.isInteger(keyCacheTtlSeconds) &&
      keyCacheTtlSeconds >= 0
    )
  ) {
    return {
      ok: false,
      problem: 'the registry manifest\'s "keyCacheTtlSeconds" must be a whole number of seconds',
    };
  }
  const manifest: RegistryManifest = {
    shards,
    ...(previousShards === undefined ? {} : { previousShards }),
    shardIds,
    ...(keyCacheTtlSeconds === undefined ? {} : { keyCacheTtlSeconds }),
  };
  const problem = layoutProblem(manifest);
  if (problem !== undefined) return { ok: false, problem: `the registry manifest's ${problem}` };
  return { ok: true, manifest };
}

/** The manifest's text, fields in a fixed order. */
export function serializeRegistryManifest(manifest: RegistryManifest): string {
  return JSON.stringify({
    format: REGISTRY_MANIFEST_FORMAT,
    shards: manifest.shards,
    ...(manifest.previousShards === undefined ? {} : { previousShards: manifest.previousShards }),
    shardIds: manifest.shardIds,
    ...(manifest.keyCacheTtlSeconds === undefined ? {} : { keyCacheTtlSeconds: manifest.keyCacheTtlSeconds }),
  });
}
