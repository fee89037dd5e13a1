import { errorLine, EXIT_CODES, exitCodeOf, UsageError } from '../../../../tools/common/exit';
import { generateKey } from '../../../../shared/keys/key-material';

class ToolFailure extends Error {}

describe('errorLine', () => {
  it("writes a tool's own failure as it is, on one line", () => {
    expect(errorLine(new ToolFailure('secret x\nnot  found'), [ToolFailure])).toBe(
      'error: secret x not found\n',
    );
  });

  it('cuts an unexpected error to its first line, never a stack, and masks anything shaped like a generated key', () => {
    const leaked = `payk_${'A'.repeat(43)}`;

    const line = errorLine(new TypeError(`cannot read ${leaked}\n    at somewhere (file.ts:1:1)`), [
      ToolFailure,
    ]);

    expect(line).toBe('error: unexpected TypeError: cannot read payk_…\n');
  });

  it('masks a generated key in any case', () => {
    expect(errorLine(new ToolFailure(`got PAYK_${'a'.repeat(43)}`), [ToolFailure])).toBe(
      'error: got payk_…\n',
    );
  });

  it('masks a key of the key format whatever its prefix, and one cut short, keeping only the prefix', () => {
    const key = generateKey('acme_live');

    expect(errorLine(new TypeError(`bad ${key} and ${generateKey().slice(0, -4)}`), [])).toBe(
      'error: unexpected TypeError: bad acme_live_… and pay_…\n',
    );
  });

  it('describes a thrown non-error without guessing', () => {
    expect(errorLine('a string', [ToolFailure])).toBe('error: unexpected failure\n');
  });
});

describe('exitCodeOf', () => {
  it('is 2 for bad usage, a subclass included, and 1 for anything else', () => {
    class SubUsageError extends UsageError {}

    expect([
      exitCodeOf(new UsageError('x')),
      exitCodeOf(new SubUsageError('x')),
      exitCodeOf(new Error('x')),
      exitCodeOf('x'),
    ]).toEqual([EXIT_CODES.usage, EXIT_CODES.usage, EXIT_CODES.failed, EXIT_CODES.failed]);
  });
});
