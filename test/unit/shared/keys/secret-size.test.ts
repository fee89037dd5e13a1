import { SECRET_MAX_BYTES, secretSize } from '../../../../shared/keys/secret-size';

describe('secretSize', () => {
  it('counts UTF-8 bytes, not characters', () => {
    expect(secretSize('{"é":1}').bytes).toBe(8);
  });

  it.each([
    ['well within', 1_000, { fits: true, nearlyFull: false, overBy: 0 }],
    [
      'at 80 %, from where writers warn',
      Math.ceil(SECRET_MAX_BYTES * 0.8),
      { fits: true, nearlyFull: true, overBy: 0 },
    ],
    ['exactly at the limit', SECRET_MAX_BYTES, { fits: true, nearlyFull: true, overBy: 0 }],
    ['one byte over', SECRET_MAX_BYTES + 1, { fits: false, nearlyFull: true, overBy: 1 }],
  ])('judges a secret %s', (_label, bytes, expected) => {
    const size = secretSize('x'.repeat(bytes));

    expect(size).toMatchObject({ bytes, ...expected });
    expect(size.fillPercent).toBeCloseTo((bytes / 65_536) * 100, 6);
  });
});
