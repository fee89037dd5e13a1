import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describeError, type Logger } from '../../shared/logger';

export interface KeysFileWatch {
  close(): void;
}

/**
 * Calls `onChange` whenever the key file may have changed. It watches the file's directory, not the file: the key
 * CLI replaces the file by renaming a new one over it, and a watch on the file itself would follow the old inode.
 * A platform that cannot watch leaves the cache's TTL as the only re-read, said once in the log.
 */
export function watchKeysFile(path: string, onChange: () => void, logger: Logger): KeysFileWatch {
  const name = basename(path);
  let watcher: FSWatcher;
  try {
    watcher = watch(dirname(path), { persistent: false }, (_event, filename) => {
      // Some platforms do not say which file changed: then any change in the directory counts.
      if (filename === null || filename === name) onChange();
    });
  } catch (error) {
    logger.warn('cannot watch the key file: changes apply at the next re-read', {
      error: describeError(error),
    });
    return { close: () => undefined };
  }
  watcher.on('error', (error) => {
    logger.warn('stopped watching the key file: changes apply at the next re-read', {
      error: describeError(error),
    });
    watcher.close();
  });
  return {
    close: () => {
      watcher.close();
    },
  };
}
