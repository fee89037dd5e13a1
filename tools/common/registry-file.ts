import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, join } from 'node:path';
import { errorCode } from '../../shared/errors';
import { parseRegistryManifest, type RegistryManifest } from '../../shared/keys/registry';

/* A local registry: registry.json and the shard files beside it. */

/**
 * Where a local registry's shard file is: its id in registry.json, relative to the file's directory unless absolute
 * (`init` writes `keys-<i>.json`, beside it).
 */
export function shardFilePath(manifestPath: string, id: string): string {
  return isAbsolute(id) ? id : join(dirname(manifestPath), id);
}

export type RegistryFileReading =
  | { readonly ok: true; readonly manifest: RegistryManifest }
  | { readonly ok: false; readonly problem: string };

/**
 * Reads and checks a local registry.json for the key CLI (the local server reads it as it reads a key file, with a
 * deadline: keys-setup.ts); the problem is one line naming the file, never quoting it. The shard ids are as
 * written (shardFilePath makes them paths).
 */
export async function readRegistryFile(path: string): Promise<RegistryFileReading> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    const code = errorCode(error);
    return {
      ok: false,
      problem:
        code === 'ENOENT'
          ? `registry file ${path} does not exist (init creates one)`
          : `cannot read registry file ${path}${code === undefined ? '' : ` (${code})`}`,
    };
  }
  const reading = parseRegistryManifest(text);
  return reading.ok ? reading : { ok: false, problem: `${reading.problem} (registry file ${path})` };
}
