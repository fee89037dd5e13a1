/**
 * The smoke test against the real local server, both as users run them: `npm start` in its own process and
 * `npm run smoke` in another, with the key in APP_KEY.
 */
import { generateKey } from '../../../shared/keys/key-material';
import {
  SETUP_TIMEOUT_MS,
  startLocalServerWithKeys,
  type KeyFileServer,
  type LocalServerProcess,
} from '../../support/local-server-process';
import { ownStderrLines, parseReport, runSmokeInProcess, spawnSmoke } from '../../support/run-smoke';

const APP_KEY = generateKey();
let server: LocalServerProcess;
let local: KeyFileServer;

beforeAll(async () => {
  local = await startLocalServerWithKeys({ demo: [generateKey(), APP_KEY] });
  ({ server } = local);
}, SETUP_TIMEOUT_MS);

afterAll(() => local.stop());

describe('npm run smoke against npm start', () => {
  it(
    'passes every check, prints the table and exits 0, never printing the key',
    async () => {
      // Act
      const run = await spawnSmoke(
        ['--url', `${server.baseUrl}/payment`, '--app-id', 'demo'],
        { APP_KEY },
        'npm',
      );

      // Assert
      expect(run.code).toBe(0);
      expect(ownStderrLines(run.stderr)).toEqual([]);
      expect(run.stdout.split('\n')[0]).toBe(
        `payment-api smoke test of ${server.baseUrl}/payment as App-id demo`,
      );
      expect(run.stdout).toContain('passed: 12 of 12 checks, 11 requests sent');
      expect(run.stdout + run.stderr).not.toContain(APP_KEY);
    },
    SETUP_TIMEOUT_MS,
  );

  it('reports every check passed in --json, with what each answer was', async () => {
    // Act
    const run = await runSmokeInProcess(
      ['--url', `${server.baseUrl}/payment`, '--app-id', 'demo', '--json'],
      {
        APP_KEY,
      },
    );

    // Assert
    const report = parseReport(run.stdout);
    expect(run.code).toBe(0);
    expect(report).toMatchObject({
      url: `${server.baseUrl}/payment`,
      appId: 'demo',
      passed: true,
      requestsSent: 11,
    });
    expect(report.checks.map((check) => [check.id, check.status, check.got])).toEqual([
      ['accepted', 200, '200 ok'],
      ['wrong-key', 401, '401 unauthorized, WWW-Authenticate'],
      ['unknown-app', 401, '401 unauthorized, WWW-Authenticate'],
      ['missing-app-key', 401, '401 unauthorized, WWW-Authenticate'],
      ['missing-app-id', 401, '401 unauthorized, WWW-Authenticate'],
      ['duplicate-app-key', 401, '401 unauthorized, WWW-Authenticate'],
      ['same-401', undefined, '5 identical'],
      ['wrong-media-type', 415, '415 unsupported_media_type'],
      ['invalid-json', 400, '400 bad_request'],
      ['method-get', 405, '405 method_not_allowed, Allow: POST'],
      ['method-delete', 405, '405 method_not_allowed, Allow: POST'],
      ['other-path', 404, '404 not_found'],
    ]);
  });
});
