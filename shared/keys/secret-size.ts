/**
 * Secrets Manager refuses a secret value over 65,536 bytes, so every writer checks the size before it writes, and
 * the payment Lambda reports how full the secret is. Sizes are UTF-8 bytes of the SecretString.
 */
export const SECRET_MAX_BYTES = 65_536;

/** From this share of the limit, writers warn and the SecretNearlyFull alarm fires. */
export const SECRET_WARNING_FILL_PERCENT = 80;

export interface SecretSize {
  readonly bytes: number;
  /** Share of SECRET_MAX_BYTES, in percent (100 is full). */
  readonly fillPercent: number;
  /** The bytes over the limit; 0 when it fits. */
  readonly overBy: number;
  readonly fits: boolean;
  /** At or above SECRET_WARNING_FILL_PERCENT. */
  readonly nearlyFull: boolean;
}

export function secretSize(secretString: string): SecretSize {
  const bytes = Buffer.byteLength(secretString, 'utf8');
  const fillPercent = (bytes / SECRET_MAX_BYTES) * 100;
  return {
    bytes,
    fillPercent,
    overBy: Math.max(0, bytes - SECRET_MAX_BYTES),
    fits: bytes <= SECRET_MAX_BYTES,
    nearlyFull: fillPercent >= SECRET_WARNING_FILL_PERCENT,
  };
}
