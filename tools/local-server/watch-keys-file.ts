import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describeError, type Logger } from '../../shared/logger';

export interface KeysFileWatch {
  close(): void;
}

export interface KeyFilesWatch extends KeysFileWatch {
  /** Watches these files from now on (a registry's layout changed), and no others. */
  update(paths: readonly string[]): void;
}

/**
 * Calls `onChange(path)` whenever one of the key files may have changed: a key file, or a local registry's
 * registry.json and shard files. It watches the files' directories, not the files: the key CLI replaces a file by
 * renaming a new one over it, and a watch on the file itself would follow the old inode. A directory's changes
 * come in the order they were made, so a reader reloading on each sees a registry's writes in order. A platform
 * that cannot watch leaves the cache's TTL as the only re-read, said once in the log.
 */
export function watchKeyFiles(
  paths: readonly string[],
  onChange: (path: string) => void,
  logger: Logger,
  what = 'the key files',
): KeyFilesWatch {
  const watched = new Map<string, { readonly watcher: FSWatcher; names: Set<string> }>();

  const watchDirectory = (directory: string, names: Set<string>): void => {
    let watcher: FSWatcher;
    try {
      watcher = watch(directory, { persistent: false }, (_event, filename) => {
        const current = watched.get(directory)?.names ?? new Set<string>();
        // Some platforms do not say which file changed: then any change in the directory counts for each.
        const changed = filename === null ? [...current] : current.has(filename) ? [filename] : [];
        for (const name of changed) onChange(join(directory, name));
      });
    } catch (error) {
      logger.warn(`cannot watch ${what}: changes apply at the next re-read`, { error: describeError(error) });
      return;
    }
    watcher.on('error', (error) => {
      logger.warn(`stopped watching ${what}: changes apply at the next re-read`, {
        error: describeError(error),
      });
      watcher.close();
      watched.delete(directory);
    });
    watched.set(directory, { watcher, names });
  };

  const update = (next: readonly string[]): void => {
    const byDirectory = new Map<string, Set<string>>();
    for (const path of next) {
      const names = byDirectory.get(dirname(path)) ?? new Set<string>();
      names.add(basename(path));
      byDirectory.set(dirname(path), names);
    }
    for (const [directory, { watcher }] of watched) {
      if (!byDirectory.has(directory)) {
        watcher.close();
        watched.delete(directory);
      }
    }
    for (const [directory, names] of byDirectory) {
      const entry = watched.get(directory);
      if (entry === undefined) watchDirectory(directory, names);
      else entry.names = names;
    }
  };

  update(paths);
  return {
    update,
    close: () => {
      for (const { watcher } of watched.values()) watcher.close();
      watched.clear();
    },
  };
}

/** The local server's one key file: `onChange` whenever it may have changed. */
export function watchKeysFile(path: string, onChange: () => void, logger: Logger): KeysFileWatch {
  return watchKeyFiles([path], onChange, logger, 'the key file');
}
