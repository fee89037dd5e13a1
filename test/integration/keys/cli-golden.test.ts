/**
 * Golden outputs of the key CLI: every command, and the errors of each, run against a key file, a local registry of
 * 8 shards, and moto registries of 1 and 8 shards (each through its stack's outputs). Each step's standard output,
 * standard error and exit code are recorded in test/integration/keys/golden/<target>.txt, byte for byte.
 *
 * Deterministic by the CLI's own seams: the clock (`now`) is fixed, and each step makes its keys with a generator of
 * its own (keys of the key format with the prefix the CLI asks for, their 32 random characters taken from SHA-256
 * over "<step label>#<n>"), so a step that makes one key more or less than
 * before changes no other step's keys. Only what truly varies between runs is normalised (normalise() below): the
 * temporary directory (`<tmp>`), the random 6-character suffix moto gives a secret's ARN (`-XXXXXX`) and moto's port;
 * and the order of the key lines `apply` hands out (a keys file, or standard output with `--keys-out -`), which is
 * the order the shards' writes landed in, concurrent by design: those lines are shown sorted.
 *
 * A golden changes only on purpose: `UPDATE_GOLDEN=1 npx jest test/integration/keys/cli-golden.test.ts` rewrites
 * them, and the commit that changes one says which message changed and why.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ListSecretsCommand, type SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { keyIdOf } from '../../../shared/keys/key-document';
import { checksumText, DEFAULT_KEY_PREFIX } from '../../../shared/keys/key-format';
import { toCompactDigestForm } from '../../../shared/keys/key-material';
import {
  createOperatorCloudFormationClient,
  createOperatorSecretsManagerClient,
} from '../../../tools/common/aws-clients';
import { runCli, spawnCli, type CliResult } from '../../support/keys-cli';
import { freeLoopbackPort } from '../../support/loopback';
import { EMULATOR_CALL_BOUNDS, startMoto, type MotoServer } from '../../support/moto';
import { createMotoRegistry, deployShards, type MotoClients } from '../../support/registry-moto';

const GOLDEN_DIRECTORY = join(__dirname, 'golden');
const UPDATE = process.env.UPDATE_GOLDEN === '1';

/** The instant every step runs at. */
const NOW = Date.parse('2026-06-01T00:00:00Z');

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/**
 * The n-th key (from 1) a step labelled `label` makes: a key of the key format (`<prefix>_<32 base62><checksum>`),
 * the same on every run.
 */
function stepKey(label: string, n: number, prefix = DEFAULT_KEY_PREFIX): string {
  const digest = createHash('sha256').update(`${label}#${n}`).digest();
  const randomPart = [...digest].map((byte) => BASE62.charAt(byte % 62)).join('');
  return `${prefix}_${randomPart}${checksumText(randomPart)}`;
}

function stepKeys(label: string): (prefix: string) => string {
  let n = 0;
  return (prefix) => stepKey(label, ++n, prefix);
}

/** What a step may use to build its arguments and files. */
interface StepContext {
  readonly tmp: string;
  /** The id of the n-th key the step labelled `label` made. */
  id(label: string, n?: number): string;
  /** The n-th key itself, for standard input (never on the command line). */
  key(label: string, n?: number): string;
}

interface Step {
  /** Unique within a scenario: it names the step in the golden and seeds its keys. */
  readonly label: string;
  readonly argv: readonly string[] | ((context: StepContext) => readonly string[]);
  /** false: the target's flags are not added (a usage error about targets, say). */
  readonly withTarget?: boolean;
  readonly env?: Readonly<Record<string, string>>;
  /** Files written into the temporary directory before the step. */
  readonly files?: Readonly<Record<string, (context: StepContext) => string>>;
  /** Files of the temporary directory shown after the step, with their mode. */
  readonly show?: readonly string[];
  readonly before?: () => Promise<void>;
  /** Standard output holds only key lines (`--keys-out -`): shown sorted (see the header). */
  readonly keysOnStdout?: boolean;
  /** Standard input (leaked's keys); not shown in the golden. */
  readonly stdin?: (context: StepContext) => string;
}

const changeFile = (changes: readonly object[]): string =>
  JSON.stringify({ format: 'payment-api-key-changes/1', changes }, null, 2) + '\n';

/** The steps every target runs, in order: each command, its options, and its errors. */
const COMMON_STEPS: readonly Step[] = [
  { label: 'add-app demo', argv: ['add-app', 'demo'] },
  { label: 'add-app demo again', argv: ['add-app', 'demo'] },
  {
    label: 'add-app partner-a expiring, json',
    argv: ['add-app', 'partner-a', '--expires-in', '90d', '--json'],
  },
  { label: 'add-app partner-b hashed', argv: ['add-app', 'partner-b', '--hash'] },
  { label: 'add-app partner-c', argv: ['add-app', 'partner-c'] },
  { label: 'add-app invalid app id', argv: ['add-app', 'bad id!'] },
  { label: 'add-app expires-in 0s', argv: ['add-app', 'partner-x', '--expires-in', '0s'] },
  { label: 'add-app no app id', argv: ['add-app'] },
  { label: 'add-app two app ids', argv: ['add-app', 'one', 'two'] },
  { label: 'add-app with --grace', argv: ['add-app', 'partner-x', '--grace', '1d'] },
  { label: 'rotate demo', argv: ['rotate', 'demo'] },
  {
    label: 'rotate demo grace json',
    argv: ['rotate', 'demo', '--grace', '7d', '--expires-in', '30d', '--json'],
  },
  { label: 'rotate partner-c grace 0s', argv: ['rotate', 'partner-c', '--grace', '0s'] },
  { label: 'rotate unknown app', argv: ['rotate', 'nobody'] },
  { label: 'rotate bad grace', argv: ['rotate', 'demo', '--grace', 'soon'] },
  { label: 'list', argv: ['list'] },
  { label: 'list json', argv: ['list', '--json'] },
  { label: 'list default limit', argv: ['list', '--default-limit', '20'] },
  { label: 'list default burst alone', argv: ['list', '--default-burst', '5'] },
  { label: 'list bad default limit', argv: ['list', '--default-limit', 'lots'] },
  { label: 'where demo', argv: ['where', 'demo'] },
  { label: 'where demo json', argv: ['where', 'demo', '--json'] },
  { label: 'where unknown app', argv: ['where', 'nobody'] },
  { label: 'where invalid app id', argv: ['where', 'x y'] },
  { label: 'revoke first key of demo', argv: (c) => ['revoke', 'demo', c.id('add-app demo')] },
  { label: 'revoke unknown key', argv: ['revoke', 'demo', '0123456789ab'] },
  { label: 'revoke invalid key id', argv: ['revoke', 'demo', 'nothex'] },
  { label: 'revoke no key id', argv: ['revoke', 'demo'] },
  { label: 'revoke last key', argv: (c) => ['revoke', 'partner-b', c.id('add-app partner-b hashed')] },
  {
    label: 'revoke last key forced',
    argv: (c) => ['revoke', 'partner-b', c.id('add-app partner-b hashed'), '--force'],
  },
  {
    label: 'expire in 1d',
    argv: (c) => ['expire', 'partner-a', c.id('add-app partner-a expiring, json'), '--in', '1d'],
  },
  {
    label: 'expire never',
    argv: (c) => ['expire', 'partner-a', c.id('add-app partner-a expiring, json'), '--never'],
  },
  {
    label: 'expire at, json',
    argv: (c) => [
      'expire',
      'partner-a',
      c.id('add-app partner-a expiring, json'),
      '--at',
      '2027-01-01T00:00:00Z',
      '--json',
    ],
  },
  {
    label: 'expire no choice',
    argv: (c) => ['expire', 'partner-a', c.id('add-app partner-a expiring, json')],
  },
  {
    label: 'expire two choices',
    argv: (c) => ['expire', 'partner-a', c.id('add-app partner-a expiring, json'), '--in', '1d', '--never'],
  },
  {
    label: 'expire bad at',
    argv: (c) => ['expire', 'partner-a', c.id('add-app partner-a expiring, json'), '--at', 'yesterday'],
  },
  { label: 'expire unknown key', argv: ['expire', 'partner-a', '0123456789ab', '--in', '1d'] },
  {
    label: 'expire at a past instant',
    argv: (c) => [
      'expire',
      'partner-a',
      c.id('add-app partner-a expiring, json'),
      '--at',
      '2026-01-01T00:00:00Z',
    ],
  },
  { label: 'allow two networks', argv: ['allow', 'demo', '203.0.113.0/24', '2001:db8::/32'] },
  { label: 'allow json', argv: ['allow', 'demo', '198.51.100.7', '--json'] },
  { label: 'allow invalid block', argv: ['allow', 'demo', '10.0.0.999/8'] },
  { label: 'allow nothing', argv: ['allow', 'demo'] },
  { label: 'allow blocks and any', argv: ['allow', 'demo', '10.0.0.0/8', '--any'] },
  { label: 'disallow one', argv: ['disallow', 'demo', '203.0.113.0/24'] },
  { label: 'disallow the rest', argv: ['disallow', 'demo', '2001:db8::/32', '198.51.100.7'] },
  { label: 'disallow nothing', argv: ['disallow', 'demo'] },
  { label: 'allow any', argv: ['allow', 'demo', '--any'] },
  { label: 'limit per second and burst', argv: ['limit', 'demo', '--per-second', '20', '--burst', '40'] },
  { label: 'limit fraction json', argv: ['limit', 'demo', '--per-second', '0.5', '--json'] },
  { label: 'limit default', argv: ['limit', 'demo', '--default'] },
  { label: 'limit default with burst', argv: ['limit', 'demo', '--default', '--burst', '3'] },
  { label: 'limit bad rate', argv: ['limit', 'demo', '--per-second', 'lots'] },
  { label: 'limit nothing', argv: ['limit', 'demo'] },
  { label: 'limit unknown app', argv: ['limit', 'nobody', '--per-second', '1'] },
  { label: 'list after edits', argv: ['list'] },
  { label: 'prune one app with none expired', argv: ['prune', 'demo'] },
  { label: 'prune', argv: ['prune'] },
  { label: 'prune again', argv: ['prune', '--json'] },
  { label: 'prune unknown app', argv: ['prune', 'nobody'] },
  { label: 'remove-app partner-c', argv: ['remove-app', 'partner-c'] },
  { label: 'remove-app unknown app', argv: ['remove-app', 'partner-c'] },
  { label: 'add-app for apply', argv: ['add-app', 'partner-r'] },
  {
    label: 'apply dry run',
    argv: ['apply', 'changes.json', '--dry-run'],
    files: {
      'changes.json': (c) =>
        changeFile([
          {
            op: 'add',
            app: 'partner-d',
            expiresIn: '365d',
            allowedCidrs: ['203.0.113.0/24'],
            rateLimit: { perSecond: 20, burst: 40 },
          },
          { op: 'add', app: 'partner-e', hash: true },
          { op: 'rotate', app: 'demo', grace: '7d' },
          { op: 'revoke', app: 'partner-r', keyId: c.id('add-app for apply'), force: true },
        ]),
    },
  },
  { label: 'apply dry run json', argv: ['apply', 'changes.json', '--dry-run', '--json'] },
  { label: 'apply without keys-out', argv: ['apply', 'changes.json'] },
  { label: 'apply keys-out stdout and json', argv: ['apply', 'changes.json', '--keys-out', '-', '--json'] },
  {
    label: 'apply',
    argv: (c) => ['apply', 'changes.json', '--keys-out', join(c.tmp, 'new.keys.jsonl')],
    show: ['new.keys.jsonl'],
  },
  {
    label: 'apply keys-out exists',
    argv: (c) => ['apply', 'changes.json', '--keys-out', join(c.tmp, 'new.keys.jsonl')],
  },
  {
    label: 'apply that no longer fits',
    argv: (c) => ['apply', 'changes.json', '--keys-out', join(c.tmp, 'other.keys.jsonl')],
    show: ['other.keys.jsonl'],
  },
  {
    label: 'apply keys to stdout, json',
    argv: ['apply', 'more.json', '--keys-out', '-'],
    keysOnStdout: true,
    files: {
      'more.json': () =>
        changeFile([
          { op: 'add', app: 'partner-f' },
          { op: 'rotate', app: 'partner-e', expires: '2027-01-01T00:00:00Z' },
          { op: 'remove', app: 'partner-d' },
        ]),
    },
  },
  {
    label: 'apply file with problems',
    argv: ['apply', 'bad.json', '--dry-run'],
    files: {
      'bad.json': () =>
        changeFile([
          { op: 'add', app: 'partner-g', rateLimt: { perSecond: 1 } },
          { op: 'rotate', app: 'bad id!' },
          { op: 'revoke', app: 'demo', keyId: 'nothex' },
          { op: 'add', app: 'partner-h', expiresIn: 'forever' },
          { op: 'launch', app: 'partner-i' },
        ]),
    },
  },
  {
    label: 'apply file not json',
    argv: ['apply', 'broken.json', '--dry-run'],
    files: {
      'broken.json': () => '{"format": "payment-api-key-changes/1", "changes": [\n  {"op": "add",}\n',
    },
  },
  { label: 'apply missing file', argv: ['apply', 'missing.json', '--dry-run'] },
  { label: 'apply no file', argv: ['apply'] },
  { label: 'apply with --shards', argv: ['apply', 'more.json', '--shards', '2'] },
  { label: 'add-app partner-l plain', argv: ['add-app', 'partner-l', '--plain'] },
  { label: 'add-app partner-m', argv: ['add-app', 'partner-m'] },
  {
    label: 'leaked dry run',
    argv: ['leaked', '--dry-run'],
    stdin: (c) => `${c.key('add-app partner-l plain')}\n${c.key('add-app partner-m')}\n`,
  },
  {
    label: 'leaked, one not found',
    argv: ['leaked'],
    stdin: (c) =>
      `${c.key('add-app partner-l plain')}\n${c.key('add-app partner-m')}\n${c.key('a key never stored')}\n` +
      `${c.key('add-app partner-m')}\n`,
  },
  {
    label: 'leaked again, json',
    argv: ['leaked', '--json'],
    stdin: (c) => `${c.key('add-app partner-l plain')}\n${c.key('add-app partner-m')}\n`,
  },
  {
    label: 'leaked rotate',
    argv: (c) => ['leaked', '--rotate', '--grace', '1d', '--keys-out', join(c.tmp, 'leaked.keys.jsonl')],
    // partner-f's key, from the apply that added it.
    stdin: (c) => `${c.key('apply keys to stdout, json', 1)}\n`,
    show: ['leaked.keys.jsonl'],
  },
  { label: 'leaked garbage', argv: ['leaked'], stdin: () => 'not a key\n' },
  { label: 'leaked nothing', argv: ['leaked'], stdin: () => '' },
  { label: 'leaked grace without rotate', argv: ['leaked', '--grace', '1d'], stdin: () => '' },
  { label: 'list after apply json', argv: ['list', '--json'] },
  { label: 'reshard dry run', argv: ['reshard', '--dry-run'] },
  { label: 'reshard', argv: ['reshard', '--settle', '0s'] },
  { label: 'reshard json', argv: ['reshard', '--settle', '0s', '--json'] },
  { label: 'reshard bad settle', argv: ['reshard', '--settle', 'later'] },
  { label: 'init on this target', argv: ['init', '--shards', '2'] },
  { label: 'init without shards', argv: ['init'] },
];

/** Twelve more apps, so that a change of the shard count has apps to move. */
const MANY_ADDS: Step = {
  label: 'apply twelve adds',
  argv: (c) => ['apply', 'many.json', '--keys-out', join(c.tmp, 'many.keys.jsonl')],
  files: {
    'many.json': () =>
      changeFile(
        Array.from({ length: 12 }, (_, index) => ({
          op: 'add',
          app: `merchant-${String(index + 1).padStart(2, '0')}`,
        })),
      ),
  },
};

/** The same for every target: no target, two targets, misspelt and unknown input. */
const USAGE_STEPS: readonly Step[] = [
  { label: 'no command', argv: [], withTarget: false },
  { label: 'unknown command', argv: ['lsit'] },
  { label: 'help', argv: ['--help'], withTarget: false },
  { label: 'help of a command', argv: ['add-app', '--help'], withTarget: false },
  { label: 'help of leaked', argv: ['leaked', '--help'], withTarget: false },
  { label: 'help command', argv: ['help'], withTarget: false },
  { label: 'misspelt option', argv: ['list', '--registy-file', 'registry.json'], withTarget: false },
  { label: 'unknown option', argv: ['list', '--colour'] },
  { label: 'no target', argv: ['list'], withTarget: false },
  { label: 'two targets', argv: ['list', '--file', 'a.json', '--secret-id', 'b'], withTarget: false },
  {
    label: 'two target variables',
    argv: ['list'],
    withTarget: false,
    env: { KEYS_FILE: 'a.json', KEYS_SECRET_ID: 'b' },
  },
  { label: 'invalid stack name', argv: ['list', '--stack', '1-not-a-stack'], withTarget: false },
  { label: 'secret id too long', argv: ['list', '--secret-id', 'x'.repeat(2049)], withTarget: false },
  { label: 'option value missing', argv: ['add-app', 'demo', '--expires-in'] },
];

interface Target {
  readonly name: string;
  readonly flags: (tmp: string) => readonly string[];
  readonly env: () => Readonly<Record<string, string>>;
  readonly steps: () => readonly Step[];
}

let moto: MotoServer;
let admin: SecretsManagerClient;
let clients: Required<MotoClients>;
/** Exact strings that differ between runs, and what the goldens show instead. */
const replacements: [string, string][] = [];

/** What varies between runs, made fixed: the temporary directory, moto's ARN suffixes and its port. */
function normalise(text: string, tmp: string): string {
  let out = text.split(tmp).join('<tmp>');
  for (const [from, to] of replacements) out = out.split(from).join(to);
  return out.replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>');
}

/** A stream's text as lines `| ...`, so that trailing spaces and a missing last newline show. */
function block(title: string, text: string): string {
  if (text === '') return `${title}: (empty)\n`;
  const lines = text.split('\n');
  const last = lines.pop();
  const shown = lines.map((line) => `  | ${line}\n`).join('');
  return `${title}:\n${shown}${last === '' ? '' : `  | ${last ?? ''}\n  (no newline at end)\n`}`;
}

function render(step: Step, argv: readonly string[], result: CliResult, shown: string): string {
  return (
    `## ${step.label}\n` +
    `$ keys ${argv.map((arg) => (/^[\w./:@=<>-]+$/.test(arg) ? arg : JSON.stringify(arg))).join(' ')}\n` +
    (step.env === undefined
      ? ''
      : `env: ${Object.entries(step.env)
          .map(([name, value]) => `${name}=${value}`)
          .join(' ')}\n`) +
    `exit ${result.code}\n` +
    block('stdout', result.stdout) +
    block('stderr', result.stderr) +
    shown +
    '\n'
  );
}

/** Lines in code-unit order, each still ending in its newline. */
function sortedLines(text: string): string {
  const lines = text.split('\n');
  const last = lines.pop() ?? '';
  return (
    lines
      .sort()
      .map((line) => `${line}\n`)
      .join('') + last
  );
}

function showFile(tmp: string, name: string): string {
  const path = join(tmp, name);
  if (!existsSync(path)) return `file ${name}: (absent)\n`;
  const mode = (statSync(path).mode & 0o777).toString(8);
  return block(`file ${name} (mode ${mode})`, sortedLines(readFileSync(path, 'utf8')));
}

async function runScenario(target: Target): Promise<string> {
  const tmp = mkdtempSync(join(tmpdir(), 'keys-golden-'));
  const labels = new Set<string>();
  const context: StepContext = {
    tmp,
    // New keys are stored as their compact digest: the id list shows is the digest's.
    id: (label, n = 1) => keyIdOf(toCompactDigestForm(stepKey(label, n))),
    key: (label, n = 1) => stepKey(label, n),
  };
  let transcript = '';
  try {
    for (const step of target.steps()) {
      if (labels.has(step.label)) throw new Error(`two steps are labelled ${step.label}`);
      labels.add(step.label);
      await step.before?.();
      for (const [name, text] of Object.entries(step.files ?? {}))
        writeFileSync(join(tmp, name), text(context));
      const own = typeof step.argv === 'function' ? step.argv(context) : step.argv;
      // An apply file is named by its name alone in the steps: it lives in the temporary directory.
      const files = own.map((arg) => (/^[a-z]+\.json$/.test(arg) ? join(tmp, arg) : arg));
      const argv = [...files, ...(step.withTarget === false ? [] : target.flags(tmp))];
      const result = await runCli(
        argv,
        { ...target.env(), ...step.env },
        {
          awsCallBounds: EMULATOR_CALL_BOUNDS,
          generateKey: stepKeys(step.label),
          ...(step.stdin === undefined ? {} : { stdin: () => Readable.from([step.stdin?.(context) ?? '']) }),
          now: () => NOW,
          sleep: () => Promise.resolve(),
        },
      );
      const shown = (step.show ?? []).map((name) => showFile(tmp, name)).join('');
      const stdout = step.keysOnStdout === true ? sortedLines(result.stdout) : result.stdout;
      transcript += normalise(render(step, argv, { ...result, stdout }, shown), tmp);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return transcript;
}

function checkGolden(name: string, transcript: string): void {
  const path = join(GOLDEN_DIRECTORY, `${name}.txt`);
  if (UPDATE) writeFileSync(path, transcript);
  expect(transcript).toBe(readFileSync(path, 'utf8'));
}

beforeAll(async () => {
  moto = await startMoto();
  admin = createOperatorSecretsManagerClient(moto.awsEnv, EMULATOR_CALL_BOUNDS);
  clients = {
    secretsManager: admin,
    cloudFormation: createOperatorCloudFormationClient(admin, moto.awsEnv, EMULATOR_CALL_BOUNDS),
  };
  // moto loads each service on its first call, for seconds: done here, once.
  await admin.send(new ListSecretsCommand({}));
  await clients.cloudFormation.send(new DescribeStacksCommand({}));
});

afterAll(async () => {
  admin.destroy();
  clients.cloudFormation.destroy();
  await moto.stop();
});

/** A target whose steps are the usage steps, the common steps, then its own. */
function scenario(name: string, flags: Target['flags'], env: Target['env'], extra: readonly Step[]): Target {
  return { name, flags, env, steps: () => [...USAGE_STEPS, ...COMMON_STEPS, ...extra] };
}

describe('the key CLI, golden outputs', () => {
  it('on a key file', async () => {
    const target = scenario(
      'file',
      (tmp) => ['--file', join(tmp, 'keys.json')],
      () => ({}),
      [{ label: 'reshard --shards on a key file', argv: ['reshard', '--shards', '4'] }],
    );
    checkGolden(
      'file',
      await runScenario({
        ...target,
        steps: () => [{ label: 'list before the file exists', argv: ['list'] }, ...target.steps()],
      }),
    );
  });

  it('on a local registry of 8 shards', async () => {
    const target = scenario(
      'registry-file',
      (tmp) => ['--registry-file', join(tmp, 'registry', 'registry.json')],
      () => ({}),
      [
        { label: 'init again', argv: ['init', '--shards', '8'] },
        MANY_ADDS,
        { label: 'reshard to 4, dry run', argv: ['reshard', '--shards', '4', '--dry-run'] },
        { label: 'reshard to 4', argv: ['reshard', '--shards', '4', '--settle', '0s'] },
        { label: 'list after reshard to 4', argv: ['list'] },
        { label: 'reshard to 4 again', argv: ['reshard', '--shards', '4', '--settle', '0s'] },
        { label: 'reshard to 12, json', argv: ['reshard', '--shards', '12', '--settle', '0s', '--json'] },
        { label: 'where after reshard', argv: ['where', 'partner-e'] },
        { label: 'reshard to too many', argv: ['reshard', '--shards', '2000'] },
      ],
    );
    checkGolden(
      'registry-file',
      await runScenario({
        ...target,
        steps: () => [
          { label: 'list before init', argv: ['list'] },
          { label: 'init', argv: ['init', '--shards', '8'] },
          ...target.steps(),
        ],
      }),
    );
  });

  for (const shards of [1, 8]) {
    it(`on a moto registry of ${shards} shard${shards === 1 ? '' : 's'}`, async () => {
      const stackName = `golden-${shards}`;
      const registry = await createMotoRegistry(clients, { shards, stackName });
      const arn = registry.layout.shardIds[0] ?? '';
      replacements.push([arn, arn.replace(/-[A-Za-z0-9]{6}$/, '-XXXXXX')]);
      const closedPort = await freeLoopbackPort();
      const extra: Step[] = [
        { label: 'reshard --shards on a stack', argv: ['reshard', '--shards', '4'] },
        {
          label: 'unreachable Secrets Manager',
          argv: ['list', '--secret-id', 'payment-api-keys'],
          withTarget: false,
          env: { AWS_REGION: 'eu-west-9', AWS_ENDPOINT_URL: `http://127.0.0.1:${closedPort}` },
        },
        { label: 'unknown stack', argv: ['list', '--stack', 'no-such-stack'], withTarget: false },
        { label: 'unknown secret', argv: ['list', '--secret-id', 'no-such-secret'], withTarget: false },
        { label: 'list by shard 0 secret', argv: ['list', '--secret-id', arn], withTarget: false },
      ];
      if (shards > 1) {
        extra.push(
          {
            label: 'list by manifest',
            argv: ['list', '--registry', registry.manifestName],
            withTarget: false,
          },
          MANY_ADDS,
          {
            label: 'reshard dry run after a deploy to 16',
            argv: ['reshard', '--dry-run'],
            before: async () => {
              await deployShards(admin, registry, 16, 8);
            },
          },
          { label: 'where during a reshard', argv: ['where', 'partner-e'] },
          { label: 'list during a reshard', argv: ['list'] },
          { label: 'reshard to 16', argv: ['reshard', '--settle', '0s'] },
          { label: 'reshard to 16 again, json', argv: ['reshard', '--settle', '0s', '--json'] },
        );
      }
      const target = scenario(
        `moto-${shards}`,
        () => ['--stack', stackName],
        () => moto.awsEnv,
        extra,
      );
      checkGolden(`moto-${shards}`, await runScenario(target));
    });
  }

  it('bin/keys.ts as a process', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'keys-golden-'));
    try {
      const file = join(tmp, 'keys.json');
      writeFileSync(file, JSON.stringify({ demo: ['test-demo-key-0123456789abcdef'] }));
      const runs: [string, readonly string[]][] = [
        ['list', ['list', '--file', file]],
        ['unknown command', ['lsit', '--file', file]],
      ];
      let transcript = '';
      for (const [label, argv] of runs) {
        const result = await spawnCli(argv, { KEYS_UNUSED: '' });
        transcript += normalise(render({ label, argv }, argv, result, ''), tmp);
      }
      checkGolden('process', transcript);
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
