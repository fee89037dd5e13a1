import type { WriteBudget } from './write-budget';

/** The stored text as read, and a version token that changes whenever the text does. */
export interface Snapshot {
  /** undefined: nothing stored yet (a key file that does not exist). */
  readonly text: string | undefined;
  readonly version: string;
}

export type ReplaceOutcome =
  | { readonly status: 'replaced'; readonly warnings: readonly string[] }
  /**
   * Someone else changed the text since `expectedVersion` was read; our text was not stored. `unusedVersions`: the
   * versions the attempt made all the same (a Secrets Manager write that lost the race leaves one; it counts toward
   * the secret's version quota for 24 hours). Absent: none.
   */
  | { readonly status: 'conflict'; readonly warnings: readonly string[]; readonly unusedVersions?: number };

/**
 * Where the key document lives, with compare-and-swap writes: `replace` stores `newText` only if the stored
 * version is still `expectedVersion`, so an edit based on a stale read can never overwrite someone else's.
 */
export interface KeyStore {
  /** Names the store in messages (secret id or path), never its content. */
  readonly description: string;
  read(): Promise<Snapshot>;
  replace(expectedVersion: string, newText: string): Promise<ReplaceOutcome>;
  /**
   * What `writes` more versions would meet (see write-budget.ts), for a store that has a version quota; undefined
   * for one that has none (a file). `replace` checks it itself; this is for a plan that writes several shards.
   */
  writeBudget?(writes: number): Promise<WriteBudget | undefined>;
}

/**
 * A failure the operator can act on. The message is one line, names the store and the cause, and never holds
 * the stored text or a key.
 */
export class KeyStoreError extends Error {
  override readonly name = 'KeyStoreError';
}
