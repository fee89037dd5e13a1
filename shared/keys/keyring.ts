import { readAppEntry, type AppEntryReading, type KeyringProblem } from './app-entry';
import { keyIdFromDigest, matchDigest } from './key-material';
import { SourceAllowlist } from './network';
import type { RateLimit } from './rate-limit';
import { readSecretObject } from './secret-json';

export type { KeyringProblem } from './app-entry';

export interface StoredKey {
  /** Non-secret fingerprint, safe for logs. */
  readonly id: string;
  /** The first 16 bytes of the key's SHA-256 (matchDigest): presented keys are hashed and compared with this. */
  readonly digest: Buffer;
  /** Epoch milliseconds from which the key is refused; absent: it does not expire. */
  readonly expiresAt?: number;
}

/** What a request for one app is checked against. */
export interface KeyringApp {
  /** Its keys, oldest first (more than one while a rotation is under way). */
  readonly keys: readonly StoredKey[];
  /** The networks it may call from; absent: any network. */
  readonly allowlist?: SourceAllowlist;
  /** Its own rate limit; absent: the stack's default, if it has one. */
  readonly rateLimit?: RateLimit;
}

/** App id → what its requests are checked against. */
export interface Keyring extends ReadonlyMap<string, KeyringApp> {
  /**
   * How many stored digests each request is compared with: at least the most keys any app holds. A keyring that
   * builds its apps as they are asked for (lazy-keyring.ts) knows it without building them; absent, it is counted
   * from the apps.
   */
  readonly comparisonsPerRequest?: number;
}

export interface ParsedKeyring {
  readonly keyring: Keyring;
  readonly problems: readonly KeyringProblem[];
}

/**
 * The secret as a whole cannot be used. Its message never quotes the secret; `problems` locates each malformed
 * entry when that is why (every entry malformed), so the caller can log them by position.
 */
export class MalformedSecretError extends Error {
  override readonly name = 'MalformedSecretError';

  constructor(
    message: string,
    readonly problems: readonly KeyringProblem[] = [],
  ) {
    super(message);
  }
}

/**
 * `entry #3, key #2: key length must be ...`: by position only, for anything that may reach a log. An app id is
 * left out whatever it looks like: an operator may have pasted a key there, in a shape no check foresaw.
 */
export function describeKeyringProblem(problem: KeyringProblem): string {
  const key = problem.keyPosition === undefined ? '' : `, key #${problem.keyPosition}`;
  return `entry #${problem.entryPosition}${key}: ${problem.reason}`;
}

/**
 * `entry #3 (app demo), key #2: ...`: for the operator who is editing the secret (the key CLI's own output), who
 * needs the app to find the entry and sees nothing they did not type themselves.
 */
export function describeKeyringProblemWithApp(problem: KeyringProblem): string {
  const app = problem.appId === undefined ? '' : ` (app ${problem.appId})`;
  const key = problem.keyPosition === undefined ? '' : `, key #${problem.keyPosition}`;
  return `entry #${problem.entryPosition}${app}${key}: ${problem.reason}`;
}

/**
 * Parses the secret's `SecretString` (see app-entry.ts for the forms of an entry).
 *
 * Malformed entries are dropped and reported; they never authenticate. A secret that is not a JSON object, or
 * whose entries are all malformed, throws MalformedSecretError so the caller keeps its last good keyring (or
 * answers 503) instead of locking every client out. `{}` is a valid, empty keyring.
 */
export function parseKeyring(secretString: string): ParsedKeyring {
  const reading = readSecretObject(secretString);
  if (!reading.ok) throw new MalformedSecretError(`secret ${reading.problem}`);

  const keyring = new Map<string, KeyringApp>();
  const problems: KeyringProblem[] = [];
  for (const entry of reading.entries) {
    const app = readAppEntry(entry);
    problems.push(...app.problems);
    const served = keyringAppOf(app);
    if (served !== undefined) keyring.set(entry.name, served);
  }

  if (reading.entries.length > 0 && keyring.size === 0) throw noValidEntry(reading.entries.length, problems);
  return { keyring, problems };
}

/** What requests for an entry's app are checked against; undefined when the entry cannot be served. */
export function keyringAppOf(app: AppEntryReading): KeyringApp | undefined {
  if (app.appId === undefined || !app.usable) return undefined;
  return {
    keys: app.keys.map((key) => ({
      id: keyIdFromDigest(key.digest),
      digest: matchDigest(key.digest),
      ...(key.expires === undefined ? {} : { expiresAt: key.expires.at }),
    })),
    ...(app.allowlist === undefined ? {} : { allowlist: new SourceAllowlist(app.allowlist.cidrs) }),
    ...(app.rateLimit === undefined ? {} : { rateLimit: app.rateLimit.limit }),
  };
}

/** The whole secret refused: it has entries and every one is malformed (`problems` locates each). */
export function noValidEntry(entries: number, problems: readonly KeyringProblem[]): MalformedSecretError {
  return new MalformedSecretError(`secret has ${entries} app entries and none is valid`, problems);
}

/**
 * What operators are warned about: keys still valid at `now` that expire within `windowMs` of it, and whose app
 * holds no key valid beyond the window. A key expiring beside one that lives on is a rotation in progress (a
 * `rotate --grace`, or scheduled rotation's superseded key), not a partner about to lose access; counting it would
 * keep the warning on for every rotation.
 */
export function countKeysExpiringWithin(keyring: Keyring, now: number, windowMs: number): number {
  const horizon = now + windowMs;
  let count = 0;
  for (const app of keyring.values()) {
    const livesOn = app.keys.some((key) => key.expiresAt === undefined || key.expiresAt > horizon);
    if (livesOn) continue;
    count += app.keys.filter((key) => key.expiresAt !== undefined && key.expiresAt > now).length;
  }
  return count;
}
