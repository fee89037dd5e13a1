/**
 * What code reads from a thrown value, duck-typed rather than `instanceof Error`: errors raised inside Node
 * itself (sockets, files, parseArgs) come from another realm under jest, and are still errors. Each helper
 * gives the property only when it is a string, so any thrown value (a string, undefined, a plain object) is safe
 * to pass.
 */

function stringProperty(value: unknown, key: 'name' | 'message' | 'code'): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const property: unknown = (value as Partial<Record<typeof key, unknown>>)[key];
  return typeof property === 'string' ? property : undefined;
}

/** `error.message`; undefined when the value is not error-shaped. */
export function errorMessage(error: unknown): string | undefined {
  return stringProperty(error, 'message');
}

/** `error.name` (TimeoutError, ResourceNotFoundException, ...). */
export function errorName(error: unknown): string | undefined {
  return stringProperty(error, 'name');
}

/** `error.code`: Node's system error code (ENOENT, ECONNREFUSED, ...), when there is one. */
export function errorCode(error: unknown): string | undefined {
  return stringProperty(error, 'code');
}
