/**
 * What every KeyStore promises (tools/keys/key-store.ts), as one suite run against each: the in-memory fake and the
 * key file in the unit project, Secrets Manager on moto in the integration project. A store under test comes with
 * another writer, which writes the way a second operator's CLI would.
 */
import type { KeyStore } from '../../tools/keys/key-store';

export interface StoreUnderTest {
  readonly store: KeyStore;
  /** Someone else's write, through a store of their own. */
  readonly otherWriter: (text: string) => Promise<void>;
}

export function describeKeyStoreContract(
  name: string,
  make: (initial: string) => Promise<StoreUnderTest>,
): void {
  describe(`${name}: the key store contract`, () => {
    it('reads what is stored, with a version', async () => {
      const { store } = await make('{"a":["key-a-0123456789abcdef"]}');

      const snapshot = await store.read();

      expect(snapshot.text).toBe('{"a":["key-a-0123456789abcdef"]}');
      expect(snapshot.version).not.toBe('');
    });

    it('replaces the text when the version read is still current; the next read has it, under another version', async () => {
      const { store } = await make('{}');
      const before = await store.read();

      const outcome = await store.replace(before.version, '{"b":["key-b-0123456789abcdef"]}');
      const after = await store.read();

      expect(outcome.status).toBe('replaced');
      expect(after.text).toBe('{"b":["key-b-0123456789abcdef"]}');
      expect(after.version).not.toBe(before.version);
    });

    it('reports a conflict and stores nothing when another writer wrote since the read', async () => {
      const { store, otherWriter } = await make('{}');
      const stale = await store.read();
      await otherWriter('{"other":["key-o-0123456789abcdef"]}');

      const outcome = await store.replace(stale.version, '{"mine":["key-m-0123456789abcdef"]}');

      expect(outcome.status).toBe('conflict');
      expect((await store.read()).text).toBe('{"other":["key-o-0123456789abcdef"]}');
    });
  });
}
