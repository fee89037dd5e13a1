/** `npm start -- --help` describes the local server's settings and starts nothing; an argument it does not take is refused. */
import { ENV } from '../../../lambda/payment/settings';
import { KEY_STORE_ENV } from '../../../tools/common/key-store-env';
import { LOCAL_ENV } from '../../../tools/local-server/local-settings';
import { spawnTool, TSX } from '../../support/tool-process';

describe('npm start -- --help', () => {
  it('names every setting the server reads from its environment, exits 0 and serves nothing', async () => {
    const result = await spawnTool(TSX, ['bin/local-server.ts', '--help'], {});

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const variable of new Set([
      ...Object.values(KEY_STORE_ENV),
      ...Object.values(LOCAL_ENV),
      ENV.cacheTtlSeconds,
      ENV.logLevel,
    ])) {
      expect(result.stdout).toMatch(new RegExp(`^  ${variable} `, 'm'));
    }
    expect(result.stdout).not.toMatch(/listening/i);
  });

  it('refuses an argument in one line, exit 2', async () => {
    const result = await spawnTool(TSX, ['bin/local-server.ts', '--port', '4000'], {});

    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'payment-api local server: it takes no arguments, only environment variables: npm start -- --help\n',
    });
  });
});
