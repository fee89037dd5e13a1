import fc from 'fast-check';
import { KeyDocumentError, parseKeyDocument } from '../../../../shared/keys/key-document';
import { MalformedSecretError, parseKeyring, type KeyringProblem } from '../../../../shared/keys/keyring';
import { expectNotToContain, expectToEqual, expectToThrow } from '../../../support/properties/cheap-expect';
import { membersArb, textOf } from '../../../support/properties/secret-members';

/** App ids as docs/keys.md states the rule; nothing here calls the code under test. */
function isValidAppIdModel(name: string): boolean {
  return (
    /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name) &&
    !/^payk_/i.test(name) &&
    !/^[A-Za-z0-9]{32,}$/.test(name)
  );
}

function isValidStoredKeyModel(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  if (value.startsWith('sha256:')) return /^sha256:[0-9a-fA-F]{64}$/.test(value);
  return /^[\x21-\x7e]{16,512}$/.test(value);
}

/** The members that count: for a name written twice, JSON keeps the last. With their 1-based positions. */
function effectiveMembers(
  members: readonly (readonly [string, unknown])[],
): { readonly position: number; readonly name: string; readonly keys: readonly unknown[] }[] {
  const lastIndex = new Map(members.map(([name], index) => [name, index]));
  return members
    .map(([name, value], index) => ({
      position: index + 1,
      name,
      keys: Array.isArray(value) ? value : [value],
    }))
    .filter(({ name, position }) => lastIndex.get(name) === position - 1);
}

/** Where each problem is, without its words: entry, app (only a valid id), key. */
function expectedLocations(
  members: readonly (readonly [string, unknown])[],
): Omit<KeyringProblem, 'reason'>[] {
  return effectiveMembers(members).flatMap(({ position: entryPosition, name, keys }) => {
    if (!isValidAppIdModel(name)) return [{ entryPosition }];
    if (keys.length === 0) return [{ entryPosition, appId: name }];
    return keys.flatMap((key, index) =>
      isValidStoredKeyModel(key) ? [] : [{ entryPosition, appId: name, keyPosition: index + 1 }],
    );
  });
}

/** The apps that can authenticate: a valid id and at least one valid key. */
function usableApps(members: readonly (readonly [string, unknown])[]): string[] {
  return effectiveMembers(members)
    .filter(({ name, keys }) => isValidAppIdModel(name) && keys.some(isValidStoredKeyModel))
    .map(({ name }) => name);
}

describe('secret entries', () => {
  it('are reported by their position as written, naming an app only when its id is valid, never an invalid one', () => {
    fc.assert(
      fc.property(membersArb, ([members, spaces]) => {
        const text = textOf(members, spaces);
        const invalidNames = members.map(([name]) => name).filter((name) => !isValidAppIdModel(name));

        if (usableApps(members).length === 0) {
          // Only a secret with no usable entry at all is refused whole.
          expectToThrow(() => parseKeyring(text), MalformedSecretError);
          return;
        }

        const { keyring, problems } = parseKeyring(text);

        expectToEqual([...keyring.keys()].sort(), usableApps(members).sort());
        const locations = problems.map(({ entryPosition, appId, keyPosition }) => ({
          entryPosition,
          appId,
          keyPosition,
        }));
        expectToEqual(locations, expectedLocations(members));
        const logged = JSON.stringify(problems);
        for (const name of invalidNames) expectNotToContain(logged, JSON.stringify(name).slice(1, -1));
      }),
      { numRuns: 1_000 },
    );
  });

  it('never appear by an invalid app id in the strict key document’s error either', () => {
    fc.assert(
      fc.property(membersArb, ([members, spaces]) => {
        const invalidNames = members.map(([name]) => name).filter((name) => !isValidAppIdModel(name));
        fc.pre(invalidNames.length > 0);

        const parse = (): unknown => parseKeyDocument(textOf(members, spaces));

        const error = expectToThrow(parse, KeyDocumentError);
        const message = error instanceof Error ? error.message : '';
        for (const name of invalidNames) expectNotToContain(message, name);
      }),
      { numRuns: 500 },
    );
  });
});
