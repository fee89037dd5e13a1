/**
 * Secrets as an operator might write them by hand: valid and invalid app ids (integer-like ones too, which
 * Object.entries would list first), keys valid and not, names written twice, whitespace anywhere.
 */
import fc from 'fast-check';
import { appIdArb, plainKeyArb } from './arbitraries';

/** Invalid app ids, each with something that never occurs in a problem's own words (a marker or a key's tail). */
export const invalidAppIdArb = fc.oneof(
  fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((tail) => `payk_${tail}`),
  fc.tuple(appIdArb, fc.constantFrom('!', '#', ' /', '\u00e9', '\u00a0')).map(([id, marker]) => id + marker),
  fc.constant('x'.repeat(65)),
);

export const storedKeyArb = fc.oneof(
  { weight: 4, arbitrary: plainKeyArb },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>('short', 'sha256:abc', 42, null, 'has a space in it 0123'),
  },
);

export const membersArb = fc
  .array(
    fc.tuple(
      fc.oneof(
        { weight: 3, arbitrary: appIdArb },
        { weight: 1, arbitrary: fc.stringMatching(/^[0-9]{1,3}$/) },
        { weight: 2, arbitrary: invalidAppIdArb },
      ),
      fc.oneof(storedKeyArb, fc.array(storedKeyArb, { maxLength: 3 })),
    ),
    { minLength: 1, maxLength: 6 },
  )
  .chain((members) =>
    fc.tuple(
      fc.constant(members),
      fc.array(fc.constantFrom(' ', '\n', '\t', ''), {
        minLength: members.length * 3,
        maxLength: members.length * 3,
      }),
    ),
  );

/** The secret's text with the members in this order (repeats kept, integer-like names not moved first). */
export function textOf(members: readonly (readonly [string, unknown])[], spaces: readonly string[]): string {
  const written = members.map(
    ([name, value], index) =>
      `${spaces[index * 3] ?? ''}${JSON.stringify(name)}${spaces[index * 3 + 1] ?? ''}:${JSON.stringify(value)}${spaces[index * 3 + 2] ?? ''}`,
  );
  return `{${written.join(',')}}`;
}
