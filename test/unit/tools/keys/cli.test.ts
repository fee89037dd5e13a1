import { UsageError } from '../../../../tools/common/exit';
import { runProgram, type Invocation } from '../../../../tools/keys/cli';

/**
 * The key CLI's arguments as rules: which target wins, and the one line each bad input gets (exit 2 in run()). What
 * each command does with its options is proved by the golden outputs (test/integration/keys/cli-golden.test.ts).
 */

const KEY_ID = '0a1b2c3d4e5f';

/** What the program asks to run for `argv`, or the error it refuses it with. */
async function parseInvocation(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
): Promise<Invocation> {
  const asked: Invocation[] = [];
  await runProgram(argv, env, { stdout: () => undefined }, (invocation) => {
    asked.push(invocation);
    return Promise.resolve();
  });
  const [invocation] = asked;
  if (invocation === undefined) throw new Error('nothing was run');
  return invocation;
}

/** The message `argv` is refused with. */
async function refusal(argv: readonly string[], env: Readonly<Record<string, string>> = {}): Promise<string> {
  try {
    await parseInvocation(argv, env);
  } catch (error) {
    if (error instanceof UsageError) return error.message;
    throw error;
  }
  return '';
}

describe("the key CLI's arguments", () => {
  it.each([
    ['stack', 'KEYS_STACK', 'PaymentApi', { kind: 'stack', stackName: 'PaymentApi' }],
    ['registry', 'KEYS_REGISTRY', 'reg', { kind: 'registry', manifestId: 'reg' }],
    ['registry-file', 'KEYS_REGISTRY_FILE', 'r.json', { kind: 'registry-file', path: 'r.json' }],
    ['secret-id', 'KEYS_SECRET_ID', 'from-env', { kind: 'secret', secretId: 'from-env' }],
    ['file', 'KEYS_FILE', '/srv/keys.json', { kind: 'file', path: '/srv/keys.json' }],
  ])('takes the target from --%s, or alone from %s', async (flag, variable, value, target) => {
    const [flagged, fromEnv] = [
      await parseInvocation(['list', `--${flag}`, value], {}),
      await parseInvocation(['list'], { [variable]: value }),
    ];

    expect(flagged).toEqual({ command: { name: 'list' }, target, json: false });
    expect(fromEnv).toEqual(flagged);
  });

  it.each<[string, string[], Record<string, string>, unknown]>([
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
    [
      '--stack over KEYS_SECRET_ID and KEYS_REGISTRY_FILE',
      ['--stack', 'Staging'],
      { KEYS_SECRET_ID: 'env', KEYS_REGISTRY_FILE: 'r.json' },
      { kind: 'stack', stackName: 'Staging' },
    ],
  ])('takes the target from %s', async (_label, options, env, target) => {
    const invocation = await parseInvocation(['list', ...options], env);

    expect(invocation).toEqual({ command: { name: 'list' }, target, json: false });
  });

  it.each<[string, string[], string]>([
    ['no command', [], 'no command given; run with --help for usage'],
    [
      'an unknown command',
      ['delete'],
      'unknown command; expected list, add-app, rotate, revoke, remove-app, expire, prune, allow, disallow, limit, where, apply, reshard, leaked or init',
    ],
    ['a missing app id', ['rotate'], 'usage: rotate <app-id>'],
    [
      'expire without its key id',
      ['expire', 'demo', '--never'],
      'usage: expire <app-id> <key-id> (--in <duration> | --at <date-time> | --never)',
    ],
    ['prune of two apps', ['prune', 'a', 'b'], 'usage: prune [<app-id>]'],
    ['allow without an app id', ['allow', '--any'], 'usage: allow <app-id> (<cidr>... | --any)'],
    ['an extra operand', ['list', 'demo'], 'usage: list'],
    ['where without an app', ['where'], 'usage: where <app-id>'],
    ['--hash on revoke', ['revoke', 'demo', KEY_ID, '--hash'], '--hash applies only to add-app and rotate'],
    ['--force on rotate', ['rotate', 'demo', '--force'], '--force applies only to revoke'],
    [
      '--expires-in on revoke',
      ['revoke', 'demo', KEY_ID, '--expires-in', '1d'],
      '--expires-in applies only to add-app and rotate',
    ],
    ['--in on rotate', ['rotate', 'demo', '--in', '1d'], '--in applies only to expire'],
    ['--at on prune', ['prune', '--at', '2026-12-24T00:00:00Z'], '--at applies only to expire'],
    ['--never on list', ['list', '--never'], '--never applies only to expire'],
    ['--any on disallow', ['disallow', 'demo', '10.0.0.0/8', '--any'], '--any applies only to allow'],
    ['--keys-out on list', ['list', '--keys-out', 'k'], '--keys-out applies only to apply and leaked'],
    ['--per-second on list', ['list', '--per-second', '5'], '--per-second applies only to limit'],
    ['--burst on rotate', ['rotate', 'demo', '--burst', '5'], '--burst applies only to limit'],
    ['--default on allow', ['allow', 'demo', '--default'], '--default applies only to limit'],
    [
      '--default-limit on limit',
      ['limit', 'demo', '--per-second', '5', '--default-limit', '5'],
      '--default-limit applies only to list',
    ],
    [
      '--default-burst on limit',
      ['limit', 'demo', '--default', '--default-burst', '5'],
      '--default-burst applies only to list',
    ],
    ['an unknown option', ['list', '--secret'], "unknown option '--secret' (did you mean --secret-id?)"],
    [
      'a negative duration',
      ['expire', 'demo', KEY_ID, '--in=-5m'],
      'invalid --in: expected one whole number and a unit, such as 90d, 24h, 30m or 45s (at most 36500d)',
    ],
    [
      'an empty duration',
      ['rotate', 'demo', '--grace='],
      'invalid --grace: expected one whole number and a unit, such as 90d, 24h, 30m or 45s (at most 36500d)',
    ],
    [
      'a CIDR block with host bits set',
      ['allow', 'demo', '10.0.0.0/8', '203.0.113.7/24'],
      'CIDR block #2 is not valid: host bits are set: give the network address of the block',
    ],
    [
      'limit without an app id',
      ['limit', '--per-second', '5'],
      'usage: limit <app-id> (--per-second <n> [--burst <m>] | --default)',
    ],
    [
      'limit of two apps',
      ['limit', 'demo', 'shop', '--default'],
      'usage: limit <app-id> (--per-second <n> [--burst <m>] | --default)',
    ],
    [
      'limit with both choices',
      ['limit', 'demo', '--per-second', '5', '--default'],
      'limit needs exactly one of --per-second <n> or --default',
    ],
    [
      'limit with a burst alone',
      ['limit', 'demo', '--burst', '5'],
      'limit needs exactly one of --per-second <n> or --default',
    ],
    ...[
      ['of zero', '0'],
      ['below the smallest rate', '0.0009'],
      ['above the largest rate', '10000.5'],
      ['negative', '-5'],
      ['in exponent notation', '1e3'],
      ['in hexadecimal', '0x10'],
      ['of Infinity', 'Infinity'],
      ['with a unit', '20/s'],
      ['with a leading space', ' 20'],
      ['with no digit before the point', '.5'],
      ['empty', ''],
      ['holding a pasted key', 'payk_' + 'R'.repeat(43)],
    ].flatMap(([what, value = '']): [string, string[], string][] => [
      [
        `--per-second ${what}`,
        ['limit', 'demo', `--per-second=${value}`],
        '--per-second must be a number of requests per second from 0.001 to 10000',
      ],
      [
        `--default-limit ${what}`,
        ['list', `--default-limit=${value}`],
        '--default-limit must be a number of requests per second from 0.001 to 10000',
      ],
    ]),
    ...[
      ['of zero', '0'],
      ['with a fraction', '2.5'],
      ['above the largest burst', '100001'],
      ['negative', '-1'],
      ['in exponent notation', '1e2'],
      ['empty', ''],
      ['holding a pasted key', 'payk_' + 'B'.repeat(43)],
    ].flatMap(([what, value = '']): [string, string[], string][] => [
      [
        `--burst ${what}`,
        ['limit', 'demo', '--per-second', '5', `--burst=${value}`],
        '--burst must be a whole number of requests from 1 to 100000',
      ],
      [
        `--default-burst ${what}`,
        ['list', '--default-limit', '5', `--default-burst=${value}`],
        '--default-burst must be a whole number of requests from 1 to 100000',
      ],
    ]),
    [
      'a good rate and a bad burst, the burst named',
      ['limit', 'demo', '--per-second', '5', '--burst', 'lots'],
      '--burst must be a whole number of requests from 1 to 100000',
    ],
  ])('refuses %s with a one-line message', async (_label, argv, message) => {
    expect(await refusal([...argv, '--secret-id', 's'])).toBe(message);
  });

  it.each<[string, string[], Record<string, string>, string]>([
    [
      'an option without its value',
      ['list', '--secret-id'],
      {},
      '--secret-id needs a value: --secret-id <id>',
    ],
    [
      'three flags',
      ['list', '--stack', 'PaymentApi', '--registry', 'r', '--registry-file', 'f'],
      {},
      'give one of --stack, --registry, --registry-file, --secret-id or --file, not --stack, --registry and --registry-file',
    ],
    [
      'three variables',
      ['list'],
      { KEYS_STACK: 'PaymentApi', KEYS_REGISTRY: 'r', KEYS_FILE: 'f' },
      'KEYS_STACK, KEYS_REGISTRY and KEYS_FILE are set; pick one with --stack, --registry, --registry-file, --secret-id or --file',
    ],
    [
      'a secret id in the environment longer than Secrets Manager allows',
      ['list'],
      { KEYS_SECRET_ID: 's'.repeat(2049) },
      'KEYS_SECRET_ID is 2049 characters long; a secret name or ARN has at most 2048',
    ],
    [
      'a registry id longer than any secret name or ARN',
      ['list'],
      { KEYS_REGISTRY: 'r'.repeat(2049) },
      'KEYS_REGISTRY is 2049 characters long; a secret name or ARN has at most 2048',
    ],
  ])('refuses %s with a one-line message', async (_label, argv, env, message) => {
    expect(await refusal(argv, env)).toBe(message);
  });

  it('never echoes a rejected app id, which may be a pasted key', async () => {
    const pastedKey = 'payk_' + 'x'.repeat(43) + '!';
    const message = await refusal(['rotate', pastedKey, '--secret-id', 's']);

    expect(message).toMatch(/^invalid app id/);
    expect(message).not.toContain(pastedKey);
  });

  it.each<[string, string[], RegExp]>([
    ['--grace', ['rotate', 'demo', '--grace'], /^invalid --grace: /],
    ['--expires-in', ['add-app', 'demo', '--expires-in'], /^invalid --expires-in: /],
    ['--in', ['expire', 'demo', KEY_ID, '--in'], /^invalid --in: /],
    ['--at', ['expire', 'demo', KEY_ID, '--at'], /^invalid --at: /],
  ])('never echoes a key pasted as the value of %s', async (_option, argv, refused) => {
    const pastedKey = 'payk_' + 'y'.repeat(43);
    const message = await refusal([...argv, pastedKey, '--secret-id', 's']);

    expect(message).toMatch(refused);
    expect(message).not.toContain('payk_');
  });

  it('never echoes a key pasted where a CIDR block belongs', async () => {
    const pastedKey = 'payk_' + 'z'.repeat(43);

    expect(await refusal(['allow', 'demo', pastedKey, '--secret-id', 's'])).toBe(
      'CIDR block #1 is not valid: not an IPv4 or IPv6 address or CIDR block',
    );
  });
});
