import { APP_ID_PATTERN, appIdProblem, looksLikeGeneratedKey } from './app-id';
import { GENERATED_KEY_PREFIX, keyIdFromDigest, readStoredKey } from './key-material';
import { readSecretObject, type SecretEntry } from './secret-json';

export interface StoredKey {
  /** Non-secret fingerprint, safe for logs. */
  readonly id: string;
  /** SHA-256 of the key; presented keys are hashed and compared with this. */
  readonly digest: Buffer;
}

/** App id → its valid keys (more than one while a rotation is under way). */
export type Keyring = ReadonlyMap<string, readonly StoredKey[]>;

/**
 * One entry that was left out, located by position so that nothing of its text is repeated: an operator who
 * pasted a key where the app id belongs must not find it in the logs.
 */
export interface KeyringProblem {
  /** 1-based position of the entry in the secret's JSON object, in the order written. */
  readonly entryPosition: number;
  /** Set only when the app id itself is valid. */
  readonly appId?: string;
  /** 1-based position of the key in the app's list (a single key not in a list is key 1). */
  readonly keyPosition?: number;
  readonly reason: string;
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

/** Why an app id is refused, in words that repeat nothing of it; undefined when it is valid. */
function invalidAppIdReason(appId: string): string | undefined {
  if (!APP_ID_PATTERN.test(appId)) return 'app id is outside the allowed alphabet or length';
  if (looksLikeGeneratedKey(appId)) {
    return `app id starts with ${GENERATED_KEY_PREFIX}, like a generated key (a pasted key?)`;
  }
  if (appIdProblem(appId) !== undefined) return 'app id has the shape of a generated key (a pasted key?)';
  return undefined;
}

/** A stored key as written (plain or `sha256:`) and the digest presented keys are compared with. */
export interface ReadableKey {
  readonly stored: string;
  readonly digest: Buffer;
}

export interface EntryReading {
  /** Undefined when the app id is invalid (then there are no keys either). */
  readonly appId: string | undefined;
  /** The entry's keys that can be used, in order. */
  readonly keys: readonly ReadableKey[];
  readonly problems: readonly KeyringProblem[];
}

/**
 * Reads one member of the secret: its app id and its key or key list. Shared by the lenient keyring (which
 * serves what it can) and the strict key document (which refuses any problem), so both judge entries alike.
 */
export function readSecretEntry({ position: entryPosition, name, value }: SecretEntry): EntryReading {
  const appIdReason = invalidAppIdReason(name);
  if (appIdReason !== undefined) {
    return { appId: undefined, keys: [], problems: [{ entryPosition, reason: appIdReason }] };
  }
  const appId = name;
  const values: unknown[] = Array.isArray(value) ? value : [value];
  if (values.length === 0) {
    return { appId, keys: [], problems: [{ entryPosition, appId, reason: 'app has an empty key list' }] };
  }
  const keys: ReadableKey[] = [];
  const problems: KeyringProblem[] = [];
  values.forEach((candidate, index) => {
    const reading = readStoredKey(candidate);
    if (reading.ok && typeof candidate === 'string') {
      keys.push({ stored: candidate, digest: reading.digest });
    } else {
      const reason = reading.ok ? 'key is not a string' : reading.reason;
      problems.push({ entryPosition, appId, keyPosition: index + 1, reason });
    }
  });
  return { appId, keys, problems };
}

/**
 * Parses the secret's `SecretString`: a JSON object mapping each App-id to a key or a list of keys, each key
 * written as itself or as `sha256:<64 hex>`.
 *
 * Malformed entries are dropped and reported; they never authenticate. A secret that is not a JSON object, or
 * whose entries are all malformed, throws MalformedSecretError so the caller keeps its last good keyring (or
 * answers 503) instead of locking every client out. `{}` is a valid, empty keyring.
 */
export function parseKeyring(secretString: string): ParsedKeyring {
  const reading = readSecretObject(secretString);
  if (!reading.ok) throw new MalformedSecretError(`secret ${reading.problem}`);

  const keyring = new Map<string, StoredKey[]>();
  const problems: KeyringProblem[] = [];
  for (const entry of reading.entries) {
    const { appId, keys, problems: entryProblems } = readSecretEntry(entry);
    problems.push(...entryProblems);
    if (appId !== undefined && keys.length > 0) {
      keyring.set(
        appId,
        keys.map((key) => ({ id: keyIdFromDigest(key.digest), digest: key.digest })),
      );
    }
  }

  if (reading.entries.length > 0 && keyring.size === 0) {
    throw new MalformedSecretError(
      `secret has ${reading.entries.length} app entries and none is valid`,
      problems,
    );
  }
  return { keyring, problems };
}
