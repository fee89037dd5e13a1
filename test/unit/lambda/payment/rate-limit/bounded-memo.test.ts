import { boundedMemo } from '../../../../../lambda/payment/rate-limit/bounded-memo';

describe('boundedMemo', () => {
  it('computes each input once while it is kept, and keeps at most `size` inputs', () => {
    const computed: string[] = [];
    const lengthOf = boundedMemo(
      2,
      (text: string) => text,
      (text) => {
        computed.push(text);
        return text.length;
      },
    );

    expect([lengthOf('a'), lengthOf('bb'), lengthOf('a'), lengthOf('bb')]).toEqual([1, 2, 1, 2]);
    expect(computed).toEqual(['a', 'bb']);
    // A third input empties what was kept: 'a' is computed again, never served from more than two entries.
    expect([lengthOf('ccc'), lengthOf('a')]).toEqual([3, 1]);
    expect(computed).toEqual(['a', 'bb', 'ccc', 'a']);
  });
});
