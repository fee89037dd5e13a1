import { mkdir, readFile, stat, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { errorCode } from '../../shared/errors';
import { parseKeyDocument } from '../../shared/keys/key-document';
import { serializeRegistryManifest, shardSlots, type RegistryManifest } from '../../shared/keys/registry';
import { shardFilePath } from '../common/registry-file';
import { KeyStoreError } from './key-store';
import { createNewFile } from './file-store';
import { readManifestFile, type ManifestFile } from './registry-access';
import { DEFAULT_KEY_CACHE_TTL_SECONDS } from './reshard';

/**
 * A local registry: registry.json (the manifest, shardIds relative to it) beside one key file per shard, every
 * file created with mode 0600 in a directory of 0700. The CLI owns it: `init` creates it and `reshard --shards`
 * changes its shard count, which on a stack is the stack's job (-c keyShards).
 */

/** The file of shard `index`, relative to registry.json. */
export function shardFileName(index: number): string {
  return `keys-${index}.json`;
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return false;
    throw new KeyStoreError(`cannot inspect ${path} (${errorCode(error) ?? 'error'})`);
  }
}

/** Creates `path` with `text`, mode 0600, never over an existing file. */
async function createFile(path: string, text: string): Promise<void> {
  try {
    await createNewFile(path, text);
  } catch (error) {
    const code = errorCode(error);
    throw new KeyStoreError(
      code === 'EEXIST'
        ? `${path} already exists; nothing was overwritten`
        : `cannot create ${path} (${code ?? 'error'})`,
    );
  }
}

/** `init`: a registry of `shards` empty shards. Refuses if the manifest or any shard file already exists. */
export async function initRegistryFile(path: string, shards: number): Promise<RegistryManifest> {
  const directory = dirname(path);
  const manifest: RegistryManifest = {
    shards,
    shardIds: Array.from({ length: shards }, (_, index) => shardFileName(index)),
    keyCacheTtlSeconds: DEFAULT_KEY_CACHE_TTL_SECONDS,
  };
  for (const file of [path, ...manifest.shardIds.map((id) => join(directory, id))]) {
    if (await exists(file)) {
      throw new KeyStoreError(`${file} already exists; init creates a new registry and overwrites nothing`);
    }
  }
  try {
    await mkdir(directory, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new KeyStoreError(`cannot create the directory of ${path} (${errorCode(error) ?? 'error'})`);
  }
  for (const id of manifest.shardIds) await createFile(join(directory, id), '{}');
  await createFile(path, serializeRegistryManifest(manifest));
  return manifest;
}

/** Writes the manifest over the one read, compare-and-swap through the file store's lock. */
async function replaceManifest(read: ManifestFile, next: RegistryManifest): Promise<void> {
  const outcome = await read.store.replace(read.version, serializeRegistryManifest(next));
  if (outcome.status !== 'replaced') {
    throw new KeyStoreError(
      `registry file ${read.path} changed while this command ran; nothing was lost, re-run it`,
    );
  }
}

/**
 * The manifest `reshard --shards <n>` makes of `manifest`: `n` shards and, until every app has moved, the count
 * before, with a file for every slot either count uses. Refuses a change while another is under way. Pure.
 */
export function reshardedManifest(
  path: string,
  manifest: RegistryManifest,
  shards: number,
): RegistryManifest {
  if (manifest.shards === shards) return manifest;
  if (manifest.previousShards !== undefined) {
    throw new KeyStoreError(
      `a reshard from ${manifest.previousShards} to ${manifest.shards} shards is under way in registry file ${path}: ` +
        'finish it first (reshard without --shards)',
    );
  }
  const slots = shardSlots({ shards, previousShards: manifest.shards });
  const shardIds = Array.from(
    { length: slots },
    (_, index) => manifest.shardIds[index] ?? shardFileName(index),
  );
  return { ...manifest, shards, previousShards: manifest.shards, shardIds };
}

/** The first step of `reshard --shards <n>` on a local registry: the manifest as above, new shard files empty. */
export async function startFileReshard(path: string, shards: number): Promise<RegistryManifest> {
  const { manifest, ...read } = await readManifestFile(path);
  const next = reshardedManifest(path, manifest, shards);
  if (next === manifest) return manifest;
  for (const id of next.shardIds.slice(manifest.shardIds.length)) {
    const file = join(dirname(path), id);
    if (!(await exists(file))) await createFile(file, '{}');
  }
  await replaceManifest(read, next);
  return next;
}

/** Whether a shard file holds no app; one that cannot be read or parsed is kept, for the operator to look at. */
async function holdsNoApp(file: string): Promise<boolean> {
  try {
    return parseKeyDocument(await readFile(file, 'utf8')).size === 0;
  } catch {
    return false;
  }
}

/**
 * The last step: every app is at home, so the manifest drops the count before and the shards beyond `shards`, and
 * the files of those shards go once they hold no app (a shrink emptied them). Returns the files removed.
 */
export async function finishFileReshard(path: string): Promise<string[]> {
  const { manifest, ...read } = await readManifestFile(path);
  if (manifest.previousShards === undefined) return [];
  const next: RegistryManifest = {
    shards: manifest.shards,
    shardIds: manifest.shardIds.slice(0, manifest.shards),
    ...(manifest.keyCacheTtlSeconds === undefined ? {} : { keyCacheTtlSeconds: manifest.keyCacheTtlSeconds }),
  };
  await replaceManifest(read, next);
  const removed: string[] = [];
  for (const id of manifest.shardIds.slice(manifest.shards)) {
    const file = shardFilePath(path, id);
    if (!(await holdsNoApp(file))) continue;
    await unlink(file);
    removed.push(file);
  }
  return removed;
}
