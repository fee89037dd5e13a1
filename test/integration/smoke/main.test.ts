/** The smoke test as a process, as users run it; the in-process cases are in test/unit/tools/smoke/main.test.ts. */
import { generateKey } from '../../../shared/keys/key-material';
import { freeLoopbackPort } from '../../support/loopback';
import { spawnSmoke } from '../../support/run-smoke';

describe('npm run smoke as a process', () => {
  it('exits 2 for bad usage, with one line on stderr', async () => {
    expect(await spawnSmoke(['--app-id', 'demo'], {})).toEqual({
      code: 2,
      stdout: '',
      stderr: 'error: say where the API is: --url <payment-url> or --stack <stack-name>\n',
    });
  });

  it('exits 1 with one line when nothing listens at the URL', async () => {
    const url = `http://127.0.0.1:${await freeLoopbackPort()}/payment`;

    expect(await spawnSmoke(['--url', url, '--app-id', 'demo'], { APP_KEY: generateKey() })).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: cannot reach ${url}: connection refused (ECONNREFUSED)\n`,
    });
  });
});
