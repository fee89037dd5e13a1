import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchKeyFiles, type KeyFilesWatch } from '../../../../tools/local-server/watch-keys-file';
import { captureLogs } from '../../../support/capture-logger';

let directory: string;
let watch: KeyFilesWatch | undefined;

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'watch-key-files-'));
});

afterEach(() => {
  watch?.close();
  rmSync(directory, { recursive: true, force: true });
});

/** As the key CLI writes: a new file renamed over the old one. */
function replace(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

/** Collects the paths reported, and resolves once `path` is among them. */
function reported() {
  const paths: string[] = [];
  const waiting = new Map<string, () => void>();
  return {
    paths,
    onChange: (path: string) => {
      paths.push(path);
      waiting.get(path)?.();
    },
    seen: (path: string) =>
      paths.includes(path) ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(path, resolve)),
  };
}

describe('watchKeyFiles', () => {
  it("reports the registry's files as the key CLI replaces them, in the order written, and no other file", async () => {
    // Arrange
    const registry = join(directory, 'registry.json');
    const shard = join(directory, 'keys-0.json');
    for (const path of [registry, shard]) writeFileSync(path, '{}');
    const events = reported();
    watch = watchKeyFiles([registry, shard], events.onChange, captureLogs().logger);

    // Act
    replace(join(directory, 'notes.json'), '{}');
    replace(registry, '{"format":"payment-api-key-registry/1"}');
    replace(shard, '{"app":["k"]}');
    await events.seen(shard);

    // Assert
    expect(events.paths).toEqual(expect.arrayContaining([registry, shard]));
    expect(events.paths).not.toContain(join(directory, 'notes.json'));
    expect(events.paths.indexOf(registry)).toBeLessThan(events.paths.lastIndexOf(shard));
  });

  it('follows the files it is given, in another directory too', async () => {
    // Arrange
    const first = join(directory, 'keys-0.json');
    const elsewhere = join(directory, 'elsewhere', 'keys-1.json');
    mkdirSync(join(directory, 'elsewhere'));
    writeFileSync(first, '{}');
    writeFileSync(elsewhere, '{}');
    const events = reported();
    watch = watchKeyFiles([first], events.onChange, captureLogs().logger);

    // Act
    watch.update([first, elsewhere]);
    replace(elsewhere, '{"app":["k"]}');
    await events.seen(elsewhere);

    // Assert
    expect(events.paths).toContain(elsewhere);
  });

  it('says once in the log when it cannot watch, and reports nothing', () => {
    const logs = captureLogs();

    watch = watchKeyFiles([join(directory, 'missing', 'registry.json')], () => undefined, logs.logger);

    expect(logs.entries()).toEqual([
      expect.objectContaining({
        level: 'warn',
        message: 'cannot watch the key files: changes apply at the next re-read',
      }),
    ]);
  });
});
