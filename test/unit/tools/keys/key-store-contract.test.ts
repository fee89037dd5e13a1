import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileStore } from '../../../../tools/keys/file-store';
import { MemoryStore } from '../../../support/keys-cli';
import { describeKeyStoreContract } from '../../../support/key-store-contract';

const directories: string[] = [];

afterAll(() => {
  for (const directory of directories) rmSync(directory, { recursive: true, force: true });
});

describeKeyStoreContract('the in-memory fake', (initial) => {
  const store = new MemoryStore(initial);
  return Promise.resolve({
    store,
    otherWriter: (text) => {
      store.write(text);
      return Promise.resolve();
    },
  });
});

describeKeyStoreContract('the key file', (initial) => {
  const directory = mkdtempSync(join(tmpdir(), 'keys-contract-'));
  directories.push(directory);
  const path = join(directory, 'keys.json');
  writeFileSync(path, initial);
  return Promise.resolve({
    store: new FileStore(path),
    otherWriter: async (text) => {
      const other = new FileStore(path);
      const outcome = await other.replace((await other.read()).version, text);
      if (outcome.status !== 'replaced') throw new Error('the other writer lost a race it should not have');
    },
  });
});
