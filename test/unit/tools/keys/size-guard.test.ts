import { checkSecretSize, groupDigits, SecretTooLargeError } from '../../../../tools/keys/size-guard';

const MAKE_ROOM =
  '"prune" removes expired keys, "revoke" the keys clients no longer use (fewer keys per app), and a sha256: ' +
  'digest (71 characters) costs more than a plain generated key (42)';

describe('checkSecretSize', () => {
  it('lets a secret under 80% full through without a word', () => {
    expect(checkSecretSize('x'.repeat(52_428))).toBeUndefined();
  });

  it('warns from 80% full with the bytes, the fill, what is left and what to do', () => {
    expect(checkSecretSize('x'.repeat(52_429))).toBe(
      'the keys now take 52,429 bytes, 80.0% of the 65,536 a secret can hold (13,107 left; past the limit every ' +
        `write and every scheduled rotation fails): ${MAKE_ROOM}`,
    );
  });

  it('lets a secret of exactly 65,536 bytes through, warning that nothing is left', () => {
    expect(checkSecretSize('x'.repeat(65_536))).toMatch(
      /^the keys now take 65,536 bytes, 100\.0% .*\(0 left; /,
    );
  });

  it('refuses one byte more with the bytes over and what to do, in one line', () => {
    const check = () => checkSecretSize('x'.repeat(65_537));

    expect(check).toThrow(SecretTooLargeError);
    expect(check).toThrow(
      `the keys would take 65,537 bytes, 1 over the 65,536 a secret can hold; nothing was written. Make room first: ${MAKE_ROOM}`,
    );
  });

  it('counts bytes, not characters', () => {
    expect(() => checkSecretSize('é'.repeat(32_769))).toThrow(/would take 65,538 bytes, 2 over/);
  });
});

describe('groupDigits', () => {
  it.each([
    [0, '0'],
    [999, '999'],
    [1_000, '1,000'],
    [65_536, '65,536'],
    [1_234_567, '1,234,567'],
  ])('writes %i as %s', (value, text) => {
    expect(groupDigits(value)).toBe(text);
  });
});
