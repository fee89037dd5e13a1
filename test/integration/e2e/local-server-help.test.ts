/** `npm start -- --help` describes the local server's settings and starts nothing; an argument it does not take is refused. */
import { spawnTool, TSX } from '../../support/tool-process';

describe('npm start -- --help', () => {
  it('names every setting the server reads from its environment, exits 0 and serves nothing', async () => {
    const result = await spawnTool(TSX, ['bin/local-server.ts', '--help'], {});

    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    for (const variable of [
      'KEYS_FILE',
      'KEYS_REGISTRY_FILE',
      'KEYS_SECRET_ID',
      'KEYS_REGISTRY',
      'KEYS_STACK',
      'PORT',
      'KEY_CACHE_TTL_SECONDS',
      'LOG_LEVEL',
      'APP_RATE_LIMIT',
      'APP_RATE_BURST',
      'APP_RATE_LIMIT_FAILURE',
      'RATE_LIMIT_TABLE',
    ]) {
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
