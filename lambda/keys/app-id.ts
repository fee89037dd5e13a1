/**
 * App ids are names operators choose and callers send in the `App-id` header. A narrow alphabet keeps them
 * safe to print in logs and CLI output and unambiguous inside HTTP headers.
 */
export const APP_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const APP_ID_RULE =
  '1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit';

/** The app a fresh deploy (and a first local run) gets one generated key for. */
export const DEMO_APP_ID = 'demo';

export function isValidAppId(value: string): boolean {
  return APP_ID_PATTERN.test(value);
}
