import { generateKey } from '../../../shared/keys/key-material';
import { USAGE } from '../../../tools/smoke/args';
import { freeLoopbackPort } from '../../support/moto';
import { startContractServer, type ContractServer } from '../../support/contract-server';
import { parseReport, runSmokeInProcess, spawnSmoke } from '../../support/run-smoke';

const APP_KEY = generateKey();

let api: ContractServer;
beforeAll(async () => {
  api = await startContractServer({ demo: [APP_KEY] });
});
afterAll(async () => {
  await api.close();
});

describe('runSmoke', () => {
  it('prints the usage for --help and exits 0', async () => {
    expect(await runSmokeInProcess(['--help'], {})).toEqual({ code: 0, stdout: USAGE, stderr: '' });
  });

  it.each<[string, (url: string) => readonly string[], Readonly<Record<string, string>>]>([
    ['neither --url nor --stack', () => ['--app-id', 'demo'], { APP_KEY }],
    [
      'both --url and --stack',
      (url) => ['--url', url, '--stack', 'PaymentApi', '--app-id', 'demo'],
      { APP_KEY },
    ],
    ['no --app-id', (url) => ['--url', url], { APP_KEY }],
    ['--url without APP_KEY', (url) => ['--url', url, '--app-id', 'demo'], {}],
    ['a key on the command line', (url) => ['--url', url, '--app-id', 'demo', `--app-key=${APP_KEY}`], {}],
  ])('exits 2 for %s, with one line on stderr and nothing sent', async (_label, argv, env) => {
    // Act
    const run = await runSmokeInProcess(argv(api.paymentUrl), env);

    // Assert
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^error: [^\n]+\n$/);
    expect(run.stderr).not.toContain(APP_KEY);
    expect(api.received).toHaveLength(0);
  });

  it('exits 2 as a process too', async () => {
    expect(await spawnSmoke(['--app-id', 'demo'], {})).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: say where the API is: --url <payment-url> or --stack <stack-name>\n',
    });
  });

  it('fails every row when nothing listens, after one request', async () => {
    // Arrange
    const url = `http://127.0.0.1:${await freeLoopbackPort()}/payment`;

    // Act
    const run = await runSmokeInProcess(['--url', url, '--app-id', 'demo', '--json'], { APP_KEY });

    // Assert
    const report = parseReport(run.stdout);
    expect(run.code).toBe(1);
    expect(report.requestsSent).toBe(1);
    expect(report.checks[0]).toMatchObject({
      got: 'no answer',
      problems: ['connection refused (ECONNREFUSED)'],
    });
    expect(report.checks[1]).toMatchObject({
      got: 'not run',
      problems: ['not sent: an earlier request got connection refused (ECONNREFUSED)'],
    });
    expect(report.checks.every((check) => !check.passed)).toBe(true);
  });
});
