/**
 * Set up for every suite of the unit project: starting a process fails the test that tries. The unit project is
 * the fast loop (`npm run test:unit`): no moto, no cfn-lint, no `npm start`, no esbuild; whatever needs one
 * belongs in test/integration. Node's built-in module is shared by every suite of a worker, so it is restored
 * after each suite, leaving the integration project's suites untouched.
 */
import childProcess from 'node:child_process';

const STARTERS = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

beforeAll(() => {
  for (const name of STARTERS) {
    jest.spyOn(childProcess, name).mockImplementation(() => {
      throw new Error(
        `a unit test may not start a process (child_process.${name}): move it to test/integration`,
      );
    });
  }
});

afterAll(() => {
  jest.restoreAllMocks();
});
