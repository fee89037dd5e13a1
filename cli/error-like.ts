/** What the CLI reads from a thrown value: enough to describe it in one line. */
export interface ErrorLike {
  readonly name: string;
  readonly message: string;
  /** Node's system error code (ECONNREFUSED, ENOENT, ...), when there is one. */
  readonly code: string | undefined;
}

/**
 * Duck-typed rather than `instanceof Error`: errors raised inside Node itself (sockets, files, parseArgs) come
 * from another realm under jest, and are still errors.
 */
export function asErrorLike(value: unknown): ErrorLike | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, message, code } = value as { name?: unknown; message?: unknown; code?: unknown };
  if (typeof message !== 'string') return undefined;
  return {
    name: typeof name === 'string' ? name : 'Error',
    message,
    code: typeof code === 'string' ? code : undefined,
  };
}
