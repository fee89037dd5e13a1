/** A failure the smoke test explains in one line (a stack or secret it cannot use). Never holds a key. */
export class SmokeError extends Error {
  override readonly name = 'SmokeError';
}
