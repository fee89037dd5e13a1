import { BODY_LENGTH, DEFAULT_KEY_PREFIX } from '../../shared/keys/key-format';
import { DIGEST_PREFIX } from '../../shared/keys/key-material';
import { SECRET_MAX_BYTES, secretSize } from '../../shared/keys/secret-size';

/**
 * Secrets Manager refuses a value over SECRET_MAX_BYTES, and once the secret is that full every scheduled rotation
 * fails too. So every write is measured first: over the limit it is refused; from SECRET_WARNING_FILL_PERCENT it is
 * made, with a warning while there is still room to act.
 */

/** A generated key (`pay_` + 38) and a `sha256:` digest (7 + 64), as stored: what one more key costs. */
const GENERATED_KEY_LENGTH = DEFAULT_KEY_PREFIX.length + 1 + BODY_LENGTH;
const DIGEST_LENGTH = DIGEST_PREFIX.length + 64;

/** What makes room, for both messages. */
const MAKE_ROOM =
  '"prune" removes expired keys, "revoke" the keys clients no longer use (fewer keys per app), and a sha256: ' +
  `digest (${DIGEST_LENGTH} characters) costs more than a plain generated key (${GENERATED_KEY_LENGTH})`;

/** The write would not fit in a secret; nothing was written. */
export class SecretTooLargeError extends Error {
  override readonly name = 'SecretTooLargeError';
}

/** 65536 → "65,536", the same on every machine (no locale data involved). */
export function groupDigits(value: number): string {
  return String(value).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/**
 * Checks the text about to be written. Throws SecretTooLargeError when it is over the limit; returns the warning to
 * show when it is nearly full, else undefined: before the write (a plan's, `will take`) or after it (`now take`).
 */
export function checkSecretSize(
  text: string,
  verb: 'will take' | 'now take' = 'now take',
): string | undefined {
  const size = secretSize(text);
  const limit = groupDigits(SECRET_MAX_BYTES);
  if (!size.fits) {
    throw new SecretTooLargeError(
      `the keys would take ${groupDigits(size.bytes)} bytes, ${groupDigits(size.overBy)} over the ${limit} a ` +
        `secret can hold; nothing was written. Make room first: ${MAKE_ROOM}`,
    );
  }
  if (!size.nearlyFull) return undefined;
  return (
    `the keys ${verb} ${groupDigits(size.bytes)} bytes, ${size.fillPercent.toFixed(1)}% of the ${limit} a ` +
    `secret can hold (${groupDigits(SECRET_MAX_BYTES - size.bytes)} left; past the limit every write and every ` +
    `scheduled rotation fails): ${MAKE_ROOM}`
  );
}
