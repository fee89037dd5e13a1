import { parseInvocation, UsageError, type Invocation } from '../../../../tools/keys/args';

const KEY_ID = '0a1b2c3d4e5f';
const SECRET = { kind: 'secret', secretId: 'payment-api-keys' } as const;

describe('parseInvocation', () => {
  it.each<[string, string[], Invocation]>([
    [
      'list',
      ['list', '--secret-id', 'payment-api-keys'],
      { kind: 'run', command: { name: 'list' }, target: SECRET, json: false },
    ],
    [
      'list --json',
      ['list', '--json', '--secret-id', 'payment-api-keys'],
      { kind: 'run', command: { name: 'list' }, target: SECRET, json: true },
    ],
    [
      'add-app',
      ['add-app', 'demo', '--secret-id', 'payment-api-keys'],
      { kind: 'run', command: { name: 'add-app', appId: 'demo', hash: false }, target: SECRET, json: false },
    ],
    [
      'add-app --hash',
      ['add-app', 'demo', '--hash', '--secret-id', 'payment-api-keys'],
      { kind: 'run', command: { name: 'add-app', appId: 'demo', hash: true }, target: SECRET, json: false },
    ],
    [
      'rotate --json with options first',
      ['--json', '--secret-id', 'payment-api-keys', 'rotate', 'demo'],
      { kind: 'run', command: { name: 'rotate', appId: 'demo', hash: false }, target: SECRET, json: true },
    ],
    [
      'revoke',
      ['revoke', 'demo', KEY_ID, '--secret-id', 'payment-api-keys'],
      {
        kind: 'run',
        command: { name: 'revoke', appId: 'demo', keyId: KEY_ID, force: false },
        target: SECRET,
        json: false,
      },
    ],
    [
      'revoke --force',
      ['revoke', 'demo', KEY_ID, '--force', '--secret-id=payment-api-keys'],
      {
        kind: 'run',
        command: { name: 'revoke', appId: 'demo', keyId: KEY_ID, force: true },
        target: SECRET,
        json: false,
      },
    ],
    [
      'remove-app with a file',
      ['remove-app', 'partner.eu-1', '--file', './keys.json'],
      {
        kind: 'run',
        command: { name: 'remove-app', appId: 'partner.eu-1' },
        target: { kind: 'file', path: './keys.json' },
        json: false,
      },
    ],
    ['--help', ['--help'], { kind: 'help' }],
    ['-h after a command', ['rotate', 'demo', '-h'], { kind: 'help' }],
  ])('parses %s', (_label, argv, expected) => {
    expect(parseInvocation(argv, {})).toEqual(expected);
  });

  it.each<[string, string[], Record<string, string>, unknown]>([
    ['KEYS_SECRET_ID', [], { KEYS_SECRET_ID: 'from-env' }, { kind: 'secret', secretId: 'from-env' }],
    ['KEYS_FILE', [], { KEYS_FILE: '/srv/keys.json' }, { kind: 'file', path: '/srv/keys.json' }],
    [
      '--file over KEYS_SECRET_ID',
      ['--file', 'local.json'],
      { KEYS_SECRET_ID: 'from-env' },
      { kind: 'file', path: 'local.json' },
    ],
    [
      '--secret-id over KEYS_FILE',
      ['--secret-id', 'flag'],
      { KEYS_FILE: 'local.json' },
      { kind: 'secret', secretId: 'flag' },
    ],
    [
      'a flag over both variables',
      ['--secret-id', 'flag'],
      { KEYS_FILE: 'local.json', KEYS_SECRET_ID: 'env' },
      { kind: 'secret', secretId: 'flag' },
    ],
    [
      'a set variable over an empty one',
      [],
      { KEYS_FILE: '', KEYS_SECRET_ID: 'env' },
      { kind: 'secret', secretId: 'env' },
    ],
  ])('takes the target from %s', (_label, options, env, target) => {
    const invocation = parseInvocation(['list', ...options], env);

    expect(invocation).toEqual({ kind: 'run', command: { name: 'list' }, target, json: false });
  });

  it.each<[string, string[], Record<string, string>, string]>([
    ['no command', ['--secret-id', 's'], {}, 'no command given; run with --help for usage'],
    [
      'an unknown command',
      ['delete', '--secret-id', 's'],
      {},
      'unknown command; expected list, add-app, rotate, revoke or remove-app',
    ],
    ['a missing app id', ['rotate', '--secret-id', 's'], {}, 'usage: rotate <app-id>'],
    ['a missing key id', ['revoke', 'demo', '--secret-id', 's'], {}, 'usage: revoke <app-id> <key-id>'],
    ['an extra operand', ['list', 'demo', '--secret-id', 's'], {}, 'usage: list'],
    [
      'an app id outside the alphabet',
      ['add-app', 'demo app', '--secret-id', 's'],
      {},
      'invalid app id: must be 1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      'an overlong app id',
      ['rotate', 'a'.repeat(65), '--secret-id', 's'],
      {},
      'invalid app id: must be 1 to 64 characters: letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      'a generated key where the app id belongs',
      ['add-app', 'payk_' + 'A'.repeat(43), '--secret-id', 's'],
      {},
      'invalid app id: must not start with "payk_" (in any case), the prefix of generated keys',
    ],
    [
      'an app id that starts like a generated key, in upper case',
      ['add-app', 'PAYK_shop', '--secret-id', 's'],
      {},
      'invalid app id: must not start with "payk_" (in any case), the prefix of generated keys',
    ],
    [
      "the stack's generated demo key where the app id belongs",
      ['add-app', 'Q7tZk2WmX9aB4cD8eF1gH3jK5lM6nP0rS2uV4wY7zA9bC1dE', '--secret-id', 's'],
      {},
      'invalid app id: must not look like a key: 32 or more letters and digits with no ".", "_" or "-" is how ' +
        'generated keys look (use a shorter name, or separate its words)',
    ],
    [
      'a secret id in the environment longer than Secrets Manager allows',
      ['list'],
      { KEYS_SECRET_ID: 's'.repeat(2049) },
      'KEYS_SECRET_ID is 2049 characters long; a secret name or ARN has at most 2048',
    ],
    [
      'a key where the key id belongs',
      ['revoke', 'demo', 'payk_notAKeyId0123456789', '--secret-id', 's'],
      {},
      'invalid key id: expected the 12 hex characters that "list" shows, not a key',
    ],
    [
      '--hash on revoke',
      ['revoke', 'demo', KEY_ID, '--hash', '--secret-id', 's'],
      {},
      '--hash applies only to add-app and rotate',
    ],
    [
      '--force on rotate',
      ['rotate', 'demo', '--force', '--secret-id', 's'],
      {},
      '--force applies only to revoke',
    ],
    ['an unknown option', ['list', '--secret', 's'], {}, "Unknown option '--secret'"],
    [
      'an option without its value',
      ['list', '--secret-id'],
      {},
      "Option '--secret-id <value>' argument missing",
    ],
    ['both flags', ['list', '--secret-id', 's', '--file', 'f'], {}, 'give --secret-id or --file, not both'],
    [
      'both variables',
      ['list'],
      { KEYS_SECRET_ID: 's', KEYS_FILE: 'f' },
      'both KEYS_SECRET_ID and KEYS_FILE are set; pick one with --secret-id or --file',
    ],
    [
      'no target at all',
      ['list'],
      {},
      'no key store: give --secret-id <id> or --file <path> (or set KEYS_SECRET_ID or KEYS_FILE)',
    ],
  ])('refuses %s with a one-line message', (_label, argv, env, message) => {
    const parse = () => parseInvocation(argv, env);

    expect(parse).toThrow(UsageError);
    expect(parse).toThrow(new UsageError(message));
  });

  it('never echoes a rejected app id, which may be a pasted key', () => {
    const pastedKey = 'payk_' + 'x'.repeat(43) + '!';
    let message = '';

    try {
      parseInvocation(['rotate', pastedKey, '--secret-id', 's'], {});
    } catch (error) {
      message = error instanceof Error ? error.message : '';
    }

    expect(message).toMatch(/^invalid app id/);
    expect(message).not.toContain(pastedKey);
  });
});
