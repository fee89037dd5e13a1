import { readAppEntry, type KeyringProblem } from './app-entry';
import { BuiltEntries } from './built-entries';
import { keyringAppOf, MalformedSecretError, noValidEntry, type Keyring, type KeyringApp } from './keyring';
import { memberPositions, readSecretMembers } from './secret-json';

/**
 * A keyring that builds an app's entry the first time a request asks for it, for a registry of several shards.
 *
 * Building an entry is what a secret's parse costs (digests, expiries, an allowlist's BlockList), and a request
 * needs one: a full shard of the heaviest entries takes about 15 ms to build whole in a cold process, against a
 * fraction of a millisecond for JSON.parse (`npm run bench -- --only registry-cold` measures both ways). So at
 * load only the JSON is parsed and checked, and entries are built, once each, as they are asked for.
 *
 * What stays as eager parsing (parseKeyring) has it:
 * - The same entries are served, judged by the same readAppEntry; an unknown app costs no building at all.
 * - A shard whose every entry is malformed is refused whole (MalformedSecretError), so a bad edit keeps the last
 *   good copy: at load, entries are built until one is usable, which for a healthy shard is the first.
 * - Each malformed entry is reported by its position in the text and its key's position, never its app id: at
 *   load for those met before the first usable one, otherwise when a request first asks for its app (once per
 *   loaded copy). A malformed entry no request asks for is not reported here; the monitor reads every shard.
 * - Constant time: every request compares as many digests as the longest key list any entry holds (counted from
 *   the JSON, without building), whichever app it names.
 *
 * Built entries are kept in a BuiltEntries the caller may share across keyrings (the Lambda: one per environment),
 * which bounds them by count: an entry dropped from it is built again when next asked for, and its problems are not
 * reported twice for the same loaded copy.
 */

export interface LazyKeyringOptions {
  /** Told of an entry's problems when it is first built after the load, by position; must not throw. */
  readonly onProblems: (problems: readonly KeyringProblem[]) => void;
  /** Where built entries are kept. Default: a BuiltEntries of this keyring's own. */
  readonly builtEntries?: BuiltEntries;
}

export interface LazilyParsedKeyring {
  readonly keyring: Keyring;
  /** The problems of the entries built at load (those before the first usable one). */
  readonly problems: readonly KeyringProblem[];
  /** How many members the secret's object has, usable or not: what the load can count without building. */
  readonly entries: number;
}

/** How many keys an entry lists, as written: a bound on its usable keys (malformed ones are left out). */
function listedKeys(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (typeof value === 'object' && value !== null) {
    const keys: unknown = (value as Readonly<Record<string, unknown>>).keys;
    if (Array.isArray(keys)) return keys.length;
  }
  return 1;
}

/**
 * What a keyring keeps of its shard between requests: each member's value as compact JSON text, by app id, and
 * nothing else of the text it was read from. The parsed object graph of a shard (an object, arrays and strings per
 * app) takes several times the JSON's own size, and the text beside it as much again; a compact value is one flat
 * string, about the size it had in the text, turned into an entry only when its app is asked for.
 */
interface CompactMembers {
  /** App id -> its value, re-serialized. In text order when `positions` is absent. */
  readonly values: ReadonlyMap<string, string>;
  /** Each member's 1-based position as written, kept only when the text's order is not the values' order. */
  readonly positions?: ReadonlyMap<string, number>;
  readonly comparisonsPerRequest: number;
}

/**
 * Compacts the parsed members. Written by this project's tools (JSON.stringify of the shard), the text is exactly
 * its members re-serialized in order, which this checks piece by piece as it serializes them (a string compare
 * each, no scan), so an entry's position is its index. Any other text (indented by hand, an app id written twice,
 * members JSON.parse lists in another order) has its positions found by a scan of the text, once, at load.
 */
function compactMembers(text: string, members: Readonly<Record<string, unknown>>): CompactMembers {
  const values = new Map<string, string>();
  let most = 1;
  let offset = 1;
  let inTextOrder = text.startsWith('{');
  for (const name of Object.keys(members)) {
    const value = members[name];
    most = Math.max(most, listedKeys(value));
    const serialized = JSON.stringify(value);
    values.set(name, serialized);
    if (inTextOrder) {
      const piece = `${offset === 1 ? '' : ','}${JSON.stringify(name)}:${serialized}`;
      inTextOrder = text.startsWith(piece, offset);
      offset += piece.length;
    }
  }
  inTextOrder &&= offset === text.length - 1 && text.endsWith('}');
  return {
    values,
    ...(inTextOrder ? {} : { positions: memberPositions(text) }),
    comparisonsPerRequest: most,
  };
}

class LazyKeyring implements Keyring {
  readonly comparisonsPerRequest: number;
  private readonly compact: ReadonlyMap<string, string>;
  private readonly positions: ReadonlyMap<string, number> | undefined;
  /** The apps whose malformed entry was reported: once per loaded copy, however often it is built. */
  private readonly reported = new Set<string>();
  private everyApp: ReadonlyMap<string, KeyringApp> | undefined;
  /** Problems found from now on go to the caller's callback; until then (the load) they are collected. */
  private report: (problems: readonly KeyringProblem[]) => void;

  constructor(
    members: CompactMembers,
    collect: (problems: readonly KeyringProblem[]) => void,
    private readonly built: BuiltEntries,
  ) {
    this.compact = members.values;
    this.positions = members.positions;
    this.comparisonsPerRequest = members.comparisonsPerRequest;
    this.report = collect;
  }

  reportTo(onProblems: (problems: readonly KeyringProblem[]) => void): void {
    this.report = onProblems;
  }

  get(appId: string): KeyringApp | undefined {
    // A Map's own entries only: an App-id of "constructor" or "__proto__" names nothing.
    const value = this.compact.get(appId);
    if (value === undefined) return undefined;
    const kept = this.built.get(this, appId);
    if (kept !== undefined) return kept ?? undefined;
    const reading = readAppEntry({ position: 0, name: appId, value: JSON.parse(value) as unknown });
    const app = keyringAppOf(reading);
    this.built.set(this, appId, app ?? null);
    if (reading.problems.length > 0 && !this.reported.has(appId)) {
      this.reported.add(appId);
      const entryPosition = this.positionOf(appId);
      this.report(reading.problems.map((problem) => ({ ...problem, entryPosition })));
    }
    return app;
  }

  has(appId: string): boolean {
    return this.get(appId) !== undefined;
  }

  /** Everything that walks the keyring builds every entry (once): warnings about limits, tests. */
  get size(): number {
    return this.all().size;
  }

  forEach(callback: (value: KeyringApp, key: string, map: ReadonlyMap<string, KeyringApp>) => void): void {
    this.all().forEach((value, key) => {
      callback(value, key, this);
    });
  }

  entries(): MapIterator<[string, KeyringApp]> {
    return this.all().entries();
  }

  keys(): MapIterator<string> {
    return this.all().keys();
  }

  values(): MapIterator<KeyringApp> {
    return this.all().values();
  }

  [Symbol.iterator](): MapIterator<[string, KeyringApp]> {
    return this.entries();
  }

  /** Every usable app, in the order written, as parseKeyring would give them. */
  private all(): ReadonlyMap<string, KeyringApp> {
    if (this.everyApp === undefined) {
      const names = [...this.compact.keys()];
      if (this.positions !== undefined) names.sort((a, b) => this.positionOf(a) - this.positionOf(b));
      const apps = new Map<string, KeyringApp>();
      for (const name of names) {
        const app = this.get(name);
        if (app !== undefined) apps.set(name, app);
      }
      this.everyApp = apps;
    }
    return this.everyApp;
  }

  /** Found only for a malformed entry (once per app per loaded copy) or a walk: a count, when the text was in order. */
  private positionOf(name: string): number {
    if (this.positions !== undefined) return this.positions.get(name) ?? 0;
    return [...this.compact.keys()].indexOf(name) + 1;
  }
}

/**
 * Reads a shard's text for serving, building no entry beyond the first usable one. Throws MalformedSecretError,
 * as parseKeyring does, for text that is not a JSON object and for a shard whose every entry is malformed.
 */
export function parseKeyringLazily(text: string, options: LazyKeyringOptions): LazilyParsedKeyring {
  const reading = readSecretMembers(text);
  if (!reading.ok) throw new MalformedSecretError(`secret ${reading.problem}`);
  const members = compactMembers(text, reading.members);
  const entries = members.values.size;
  const atLoad: KeyringProblem[] = [];
  const keyring = new LazyKeyring(
    members,
    (problems) => atLoad.push(...problems),
    options.builtEntries ?? new BuiltEntries(),
  );
  const byPosition = (a: KeyringProblem, b: KeyringProblem): number => a.entryPosition - b.entryPosition;
  if (entries > 0 && ![...members.values.keys()].some((name) => keyring.has(name))) {
    throw noValidEntry(entries, atLoad.sort(byPosition));
  }
  keyring.reportTo(options.onProblems);
  return { keyring, problems: atLoad.sort(byPosition), entries };
}
