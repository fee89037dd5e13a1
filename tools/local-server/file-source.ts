import { readFile } from 'node:fs/promises';
import type { SecretSource } from '../../lambda/payment/key-cache';

/** The local server's stand-in for Secrets Manager: a JSON file in the secret's format, re-read on refresh. */
export function fileSource(path: string): SecretSource {
  return {
    description: path,
    fetchSecretString: () => readFile(path, 'utf8'),
  };
}
