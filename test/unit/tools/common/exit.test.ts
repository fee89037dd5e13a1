import { errorLine, EXIT_CODES, exitCodeOf, UsageError } from '../../../../tools/common/exit';
import { generateKey } from '../../../../shared/keys/key-material';

class ToolFailure extends Error {}

describe('errorLine', () => {
  const stackTrace = '\n    at somewhere (file.ts:1:1)';

  it.each<[string, unknown, string]>([
    [
      "writes a tool's own failure as it is, on one line",
      new ToolFailure('secret x\nnot  found'),
      'error: secret x not found\n',
    ],
    [
      'cuts an unexpected error to its first line, never a stack, and masks anything shaped like a generated key',
      new TypeError(`cannot read payk_${'A'.repeat(43)}${stackTrace}`),
      'error: unexpected TypeError: cannot read payk_…\n',
    ],
    [
      'masks a generated key in any case',
      new ToolFailure(`got PAYK_${'a'.repeat(43)}`),
      'error: got payk_…\n',
    ],
    [
      'masks a key of the key format whatever its prefix, and one cut short, keeping only the prefix',
      new TypeError(`bad ${generateKey('acme_live')} and ${generateKey().slice(0, -4)}`),
      'error: unexpected TypeError: bad acme_live_… and pay_…\n',
    ],
    ['describes a thrown non-error without guessing', 'a string', 'error: unexpected failure\n'],
  ])('%s', (_label, failure, line) => {
    expect(errorLine(failure, [ToolFailure])).toBe(line);
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
