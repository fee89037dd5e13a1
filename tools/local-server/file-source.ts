import type { SecretSource } from '../../lambda/payment/key-cache';
import { KEY_FILE_READ_DEADLINE_MS, readKeyFile } from './read-key-file';

/**
 * The local server's stand-in for Secrets Manager: a JSON file in the secret's format, re-read on refresh, within the
 * bounds of readKeyFile (a regular file of at most 65,536 bytes, read within its deadline).
 */
export function fileSource(path: string): SecretSource {
  return {
    description: path,
    deadlineMs: KEY_FILE_READ_DEADLINE_MS,
    fetchSecretString: () => readKeyFile(path),
  };
}
