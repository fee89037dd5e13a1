import { nonEmpty, parseArgsQuietly } from '../../../../tools/common/args';
import { UsageError } from '../../../../tools/common/exit';

const KEY = 'payk_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG';

const parse = (args: readonly string[]) =>
  parseArgsQuietly(
    {
      args: [...args],
      allowPositionals: true,
      strict: true,
      options: { name: { type: 'string' }, json: { type: 'boolean', default: false } },
    },
    (message) => new UsageError(message),
  );

describe('nonEmpty', () => {
  it('takes an empty value for an absent one', () => {
    expect([nonEmpty(undefined), nonEmpty(''), nonEmpty('x')]).toEqual([undefined, undefined, 'x']);
  });
});

describe('parseArgsQuietly', () => {
  it('parses as parseArgs does', () => {
    expect(parse(['--name', 'demo', 'list'])).toMatchObject({
      values: { name: 'demo', json: false },
      positionals: ['list'],
    });
  });

  it.each<[string, string[], string]>([
    ['an unknown option', [`--key=${KEY}`], "Unknown option '--key'"],
    ['a value given to a flag', [`--json=${KEY}`], "Option '--json' does not take an argument"],
    ['a missing value', ['--name'], "Option '--name <value>' argument missing"],
  ])('turns %s into one usage line that never holds the value', (_label, args, message) => {
    expect(() => parse(args)).toThrow(new UsageError(message));
    expect(() => parse(args)).not.toThrow(KEY);
  });
});
