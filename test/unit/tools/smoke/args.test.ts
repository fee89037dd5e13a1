import { parseSmokeInvocation, USAGE } from '../../../../tools/smoke/args';

const KEY = 'test-smoke-key-0123456789abcdef';
const URL_TEXT = 'https://abcde12345.execute-api.eu-west-1.amazonaws.com/prod/payment';

describe('parseSmokeInvocation', () => {
  it('takes --url with the key from APP_KEY', () => {
    // Act
    const invocation = parseSmokeInvocation(['--url', URL_TEXT, '--app-id', 'demo'], { APP_KEY: KEY });

    // Assert
    expect(invocation).toEqual({
      kind: 'run',
      target: { kind: 'url', url: new URL(URL_TEXT), appKey: KEY },
      appId: 'demo',
      json: false,
    });
  });

  it('takes --stack (by name or ARN) without reading APP_KEY', () => {
    const arn =
      'arn:aws:cloudformation:eu-west-1:123456789012:stack/PaymentApi/0a1b2c3d-4e5f-6789-abcd-ef0123456789';

    expect(parseSmokeInvocation(['--stack', 'PaymentApi', '--app-id', 'demo', '--json'], {})).toEqual({
      kind: 'run',
      target: { kind: 'stack', stackName: 'PaymentApi' },
      appId: 'demo',
      json: true,
    });
    expect(parseSmokeInvocation([`--stack=${arn}`, '--app-id=demo'], { APP_KEY: 'ignored' })).toMatchObject({
      target: { kind: 'stack', stackName: arn },
    });
  });

  it('answers --help before anything else', () => {
    expect(parseSmokeInvocation(['--help', '--url', 'nonsense'], {})).toEqual({ kind: 'help' });
    expect(parseSmokeInvocation(['-h'], {})).toEqual({ kind: 'help' });
    expect(USAGE).toContain(
      'npm run smoke -- (--url <payment-url> | --stack <stack-name>) --app-id <app-id>',
    );
  });

  it.each<[string, readonly string[], Readonly<Record<string, string>>, string]>([
    [
      'neither --url nor --stack',
      ['--app-id', 'demo'],
      { APP_KEY: KEY },
      'say where the API is: --url <payment-url> or --stack <stack-name>',
    ],
    [
      'both --url and --stack',
      ['--url', URL_TEXT, '--stack', 'PaymentApi', '--app-id', 'demo'],
      { APP_KEY: KEY },
      'give --url or --stack, not both',
    ],
    ['no --app-id', ['--url', URL_TEXT], { APP_KEY: KEY }, '--app-id <app-id> is required'],
    [
      '--url without APP_KEY',
      ['--url', URL_TEXT, '--app-id', 'demo'],
      {},
      "--url needs the app's key in the APP_KEY environment variable",
    ],
    [
      'a digest in APP_KEY',
      ['--url', URL_TEXT, '--app-id', 'demo'],
      { APP_KEY: `sha256:${'ab'.repeat(32)}` },
      'APP_KEY holds a sha256: digest; the smoke test needs the key itself',
    ],
    [
      'a key with a trailing newline in APP_KEY',
      ['--url', URL_TEXT, '--app-id', 'demo'],
      { APP_KEY: `${KEY}\n` },
      'APP_KEY is not a usable key: key may hold only visible ASCII characters, no spaces',
    ],
    [
      'a key on the command line',
      ['--url', URL_TEXT, '--app-id', 'demo', '--app-key', KEY],
      {},
      'the key is never taken from the command line (it would show in shell history and the process list): put it in APP_KEY, or use --stack to read it from the keys secret',
    ],
    [
      'a key given as --key=…',
      ['--url', URL_TEXT, '--app-id', 'demo', `--key=${KEY}`],
      {},
      'the key is never taken from the command line (it would show in shell history and the process list): put it in APP_KEY, or use --stack to read it from the keys secret',
    ],
    [
      'a stray argument',
      ['--url', URL_TEXT, '--app-id', 'demo', KEY],
      { APP_KEY: KEY },
      'unexpected argument: this command takes options only',
    ],
    [
      'an invalid app id',
      ['--url', URL_TEXT, '--app-id', 'payk_not an id'],
      { APP_KEY: KEY },
      'invalid --app-id: must be 1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      'an invalid stack name',
      ['--stack', '1-stack', '--app-id', 'demo'],
      {},
      'invalid --stack: a stack name is 1 to 128 letters, digits or "-", starting with a letter (or give its ARN)',
    ],
    [
      'a URL that is not one',
      ['--url', 'payment', '--app-id', 'demo'],
      { APP_KEY: KEY },
      '--url is not an absolute URL',
    ],
  ])('refuses %s with one line that quotes no value', (_label, argv, env, message) => {
    // Act
    const parse = (): unknown => parseSmokeInvocation(argv, env);

    // Assert
    expect(parse).toThrow(message);
    try {
      parse();
    } catch (error) {
      expect((error as Error).name).toBe('SmokeUsageError');
      expect((error as Error).message).toBe(message);
      expect((error as Error).message).not.toContain(KEY);
    }
  });
});
