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
import { ownStderrLines, spawnSmoke } from '../../support/run-smoke';

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
});
