import { listApps, type DocumentApp, type KeyDocument } from '../../shared/keys/key-document';
import type { RateLimit } from '../../shared/keys/rate-limit';
import { shardSlots, shardsToSearch } from '../../shared/keys/registry';
import type { OutputStream } from '../common/tool-io';
import { readDocuments } from './engine';
import { formatList, listJson, placementNotes } from './output';
import { placeApps } from './placement';
import { BATCH_GET_LIMIT, chunks, type Registry } from './registry-access';

/**
 * `list`, streamed: shards are read a batch at a time (one BatchGetSecretValue of 20), and each app's rows (or its
 * object of the JSON array) are written as soon as it is known to be the copy readers use, so the first rows come
 * after one read however large the registry. Apps come shard by shard, by app id within a shard. A copy in an
 * app's home before a reshard is shown once its new home is read and found without it; a copy in a shard no
 * reader searches, once every shard is read. Notes on misplaced apps follow, on standard error.
 */

export interface ListOptions {
  readonly json: boolean;
  readonly now: number;
  readonly defaultLimit?: RateLimit;
}

/** Whether the copy in shard `index` is the one readers use; undefined until the shards that decide it are read. */
function servedHere(
  registry: Registry,
  documents: ReadonlyMap<number, KeyDocument>,
  appId: string,
  index: number,
  everythingRead: boolean,
): boolean | undefined {
  const search = shardsToSearch(registry.manifest, appId);
  const before = search.slice(0, Math.max(0, search.indexOf(index)));
  if (search.includes(index) && before.every((other) => documents.has(other))) {
    return before.every((other) => documents.get(other)?.has(appId) !== true);
  }
  if (!everythingRead) return undefined;
  // In no shard readers search, or after one not read: shown only if no searched shard holds it.
  return search.every((other) => documents.get(other)?.has(appId) !== true);
}

export async function streamList(
  registry: Registry,
  options: ListOptions,
  io: { readonly stdout: OutputStream; readonly stderr: OutputStream },
): Promise<void> {
  const documents = new Map<number, KeyDocument>();
  const listed = new Set<string>();
  let waiting: { readonly index: number; readonly appId: string }[] = [];
  /** Shows the candidates now known to be served; keeps the undecided. */
  const showServed = (everythingRead: boolean): void => {
    const apps = new Map<string, DocumentApp>();
    const undecided: typeof waiting = [];
    for (const { index, appId } of waiting) {
      const served = servedHere(registry, documents, appId, index, everythingRead);
      const entry = documents.get(index)?.get(appId);
      if (served === undefined) undecided.push({ index, appId });
      else if (served && entry !== undefined && !listed.has(appId)) apps.set(appId, entry);
    }
    waiting = undecided;
    if (apps.size === 0) return;
    const rows = listApps(apps);
    io.stdout.write(
      options.json
        ? listJson(rows, options.now, options.defaultLimit)
            .map((app, position) => `${listed.size + position === 0 ? '[' : ','}${JSON.stringify(app)}`)
            .join('')
        : formatList(rows, options.now, options.defaultLimit, registry.kind),
    );
    for (const appId of apps.keys()) listed.add(appId);
  };
  const indices = Array.from({ length: shardSlots(registry.manifest) }, (_, index) => index);
  for (const batch of chunks(indices, BATCH_GET_LIMIT)) {
    for (const [index, document] of (await readDocuments(registry, batch, false)).documents) {
      documents.set(index, document);
      for (const appId of document.keys()) waiting.push({ index, appId });
    }
    showServed(false);
  }
  showServed(true);
  if (options.json) io.stdout.write(listed.size === 0 ? '[]\n' : ']\n');
  else if (listed.size === 0) io.stdout.write('no apps\n');
  for (const line of placementNotes(registry, placeApps(registry.manifest, documents))) io.stderr.write(line);
}
