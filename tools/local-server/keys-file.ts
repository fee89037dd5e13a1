import { randomBytes } from 'node:crypto';
import { link, mkdir, open, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { DEMO_APP_ID } from '../../shared/keys/app-id';
import { errorCode } from '../../shared/errors';
import { generateKey } from '../../shared/keys/key-material';

export const KEYS_DIRECTORY_MODE = 0o700;
export const KEYS_FILE_MODE = 0o600;

export type KeysFileSetup =
  { readonly created: true; readonly appId: string; readonly key: string } | { readonly created: false };

/** Structural, not `instanceof Error`: errors from node's fs may come from another realm (jest's sandbox). */
/**
 * Makes sure the keys file exists. When it does not, writes `{"demo": ["<new key>"]}` and returns the key
 * (the only time the caller may show it). Directories it creates get mode 0700, the file 0600.
 *
 * The file appears whole and only once: the content goes to a private temporary file (exclusive create), which
 * is then hard-linked to the final name. `link` fails if the name exists, so of two servers starting at once,
 * one creates the file and the other keeps it (and does not print a key it never wrote), and neither ever
 * sees a half-written file.
 */
export async function ensureKeysFile(path: string, keyPrefix?: string): Promise<KeysFileSetup> {
  try {
    await stat(path);
    return { created: false };
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }

  const directory = dirname(path);
  await mkdir(directory, { recursive: true, mode: KEYS_DIRECTORY_MODE });

  const key = generateKey(keyPrefix);
  const content = `${JSON.stringify({ [DEMO_APP_ID]: [key] }, null, 2)}\n`;
  const temporary = join(
    directory,
    `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  );
  const handle = await open(temporary, 'wx', KEYS_FILE_MODE);
  try {
    try {
      await handle.chmod(KEYS_FILE_MODE); // the umask may have cleared bits; never widened them
      await handle.writeFile(content, 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await link(temporary, path);
    } catch (error) {
      if (errorCode(error) === 'EEXIST') return { created: false };
      throw error;
    }
    return { created: true, appId: DEMO_APP_ID, key };
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** A warning when the keys file can be read by other users, or undefined. POSIX permissions only. */
export async function keysFilePermissionWarning(path: string): Promise<string | undefined> {
  if (process.platform === 'win32') return undefined;
  const { mode } = await stat(path);
  if ((mode & 0o077) === 0) return undefined;
  return `warning: ${path} is accessible to other users (mode ${(mode & 0o777).toString(8)}); run: chmod 600 '${path}'`;
}
