import { parseKeyDocument, serializeKeyDocument, type KeyDocument } from '../../shared/keys/key-document';
import { KeyStoreError, type KeyStore, type Snapshot } from './key-store';
import { checkSecretSize } from './size-guard';

export interface ChangeContext {
  /** True after a conflict: the document is someone else's newer version, or holds our own earlier write. */
  readonly isRetry: boolean;
}

/**
 * A pure edit of the key document. `next: undefined` means the document is already as wanted (after a
 * conflict, our own write may have landed), so nothing is written; so does a `next` that serializes as the
 * document does. Throws KeyDocumentError for bad input.
 */
export type Change<Result> = (
  document: KeyDocument,
  context: ChangeContext,
) => { readonly next: KeyDocument | undefined; readonly result: Result };

export interface EditOptions {
  /** A store with nothing in it yet (a key file not yet created) starts as an empty document if true. */
  readonly createIfMissing?: boolean;
  /** Default 8. */
  readonly maxAttempts?: number;
  /** Injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  readonly random?: () => number;
  /** A read already made (a plan that read many shards at once): the first attempt starts from it. */
  readonly firstRead?: Snapshot;
  /** The shard's name in a registry of several: prefixes what is said of its document (parse errors, size). */
  readonly shardLabel?: string;
}

export interface EditOutcome<Result> {
  readonly result: Result;
  /** How many times the change was applied to a fresh read: 1 when nobody else wrote meanwhile. */
  readonly attempts: number;
  /** The store's own, and the size guard's when the written secret is nearly full. */
  readonly warnings: readonly string[];
  /** Versions made by attempts that lost a race: stored, unused, counted toward the version quota for 24 hours. */
  readonly unusedVersions: number;
  /** Whether a new text was stored (false: the document was already as wanted). */
  readonly wrote: boolean;
}

export const DEFAULT_MAX_ATTEMPTS = 8;

/** `, leaving 2 unused versions of secret x (...)`, or nothing when the lost races made none. */
export function unusedVersionsText(unusedVersions: number, description: string): string {
  if (unusedVersions === 0) return '';
  const left =
    unusedVersions === 1
      ? 'the lost race left 1 unused version'
      : `the lost races left ${unusedVersions} unused versions`;
  return ` (${left} of ${description}, counted toward its version quota for 24 hours)`;
}

/** Every attempt lost a race with another writer. Nothing of ours was stored. */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
  constructor(
    readonly attempts: number,
    readonly unusedVersions = 0,
    description = '',
  ) {
    super(
      `the keys changed under us ${attempts} time${attempts === 1 ? '' : 's'}; nothing was lost, re-run the command` +
        unusedVersionsText(unusedVersions, description),
    );
  }
}

/** A problem of one shard's document (it does not parse, or would not fit), named by its shard. */
export class ShardError extends Error {
  override readonly name = 'ShardError';
  constructor(
    readonly label: string,
    readonly error: Error,
  ) {
    super(`${label}: ${error.message}`);
  }
}

function labelled<T>(label: string | undefined, read: () => T): T {
  try {
    return read();
  } catch (error) {
    // A store's own errors already name it.
    if (label === undefined || !(error instanceof Error) || error instanceof KeyStoreError) throw error;
    throw new ShardError(label, error);
  }
}

/** Full jitter over an exponential ceiling (100 ms, 200 ms, … up to 1.6 s) spreads competing writers apart. */
export function backoffMs(attempt: number, random: () => number): number {
  return Math.round(random() * Math.min(1_600, 100 * 2 ** (attempt - 1)));
}

function documentOf(store: KeyStore, text: string | undefined, createIfMissing: boolean): KeyDocument {
  if (text === undefined) {
    if (createIfMissing) return new Map();
    throw new KeyStoreError(`${store.description} does not exist (add-app creates it)`);
  }
  return parseKeyDocument(text);
}

/**
 * Read → apply → measure → compare-and-swap, again on a conflict: re-read, re-apply the same change (the same
 * fresh key, so the key a command prints is the key it stored), up to `maxAttempts` times. A document that would
 * not fit in a secret is refused before anything is written (SecretTooLargeError).
 */
export async function editKeys<Result>(
  store: KeyStore,
  change: Change<Result>,
  options: EditOptions = {},
): Promise<EditOutcome<Result>> {
  const maxAttempts = options.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const random = options.random ?? Math.random;
  const warnings: string[] = [];
  let unusedVersions = 0;

  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    const snapshot =
      attempt === 1 && options.firstRead !== undefined ? options.firstRead : await store.read();
    const document = labelled(options.shardLabel, () =>
      documentOf(store, snapshot.text, options.createIfMissing === true),
    );
    const { next, result } = change(document, { isRetry: attempt > 1 });
    const text = next === undefined ? undefined : serializeKeyDocument(next);
    if (text === undefined || text === serializeKeyDocument(document)) {
      return { result, attempts: attempt, warnings, unusedVersions, wrote: false };
    }

    const sizeWarning = labelled(options.shardLabel, () => checkSecretSize(text));
    const outcome = await store.replace(snapshot.version, text);
    warnings.push(...outcome.warnings);
    if (outcome.status === 'replaced') {
      if (sizeWarning !== undefined) {
        warnings.push(
          options.shardLabel === undefined ? sizeWarning : `${options.shardLabel}: ${sizeWarning}`,
        );
      }
      return { result, attempts: attempt, warnings, unusedVersions, wrote: true };
    }
    unusedVersions += outcome.unusedVersions ?? 0;
    if (attempt < maxAttempts) await sleep(backoffMs(attempt, random));
  }
  throw new ConflictError(maxAttempts, unusedVersions, store.description);
}
