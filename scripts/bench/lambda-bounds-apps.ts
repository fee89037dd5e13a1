/**
 * The apps of bench/lambda-bounds.ts, each derived from its index so that the process measured (the Lambda's bundle
 * under lambda-bounds-bundle-driver.ts) keeps no list of them beside what the Lambda's code holds. node:crypto only:
 * this file is bundled into the driver.
 */
import { createHash } from 'node:crypto';

export interface NumberedApp {
  readonly appId: string;
  readonly key: string;
}

/** App `index`: a merchant-<uuid> id and a key, both from SHA-256 of the index. */
export function appNumbered(index: number): NumberedApp {
  const hex = createHash('sha256').update(`id ${index}`).digest('hex');
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
  return {
    appId: `merchant-${uuid}`,
    key: `payk_${createHash('sha256').update(`key ${index}`).digest('base64url').slice(0, 43)}`,
  };
}

/** The key the app is rotating away from: a valid key of the same length, expiring in 2030. */
export function previousKeyOf(key: string): string {
  return `${key.slice(0, -4)}prev`;
}
