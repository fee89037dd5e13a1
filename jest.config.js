/**
 * Three projects, by what a suite needs, so the fast loop is visible in the tree:
 * - `test/unit`: pure logic; no aws-cdk-lib synthesis, no moto, no cfn-lint, no child process
 *   (`npm run test:unit`, the loop to run while you edit).
 * - `test/infrastructure`: synthesizes the stacks in memory: Template assertions, cdk-nag, the context keys, the
 *   pipeline app and its workflows (`npm run test:infrastructure`). No process, no network either.
 * - `test/integration`: moto's server, the built asset, `npm start`, the tools as processes and the real
 *   `cdk synth`.
 * `npm test` runs all three.
 * @type {import('jest').Config}
 */
const shared = {
  testEnvironment: 'node',
  // jest-circus with a code cache for the modules jest compiles, and its per-file AsyncLocalStorage disabled when
  // the file ends (the files say why).
  testRunner: '<rootDir>/test/support/jest-circus-runner.ts',
  testMatch: ['**/*.test.ts'],
  // Type-checking is tsc's job in the test command: jest only needs TypeScript stripped, which swc does in a
  // fraction of ts-jest's time.
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' } },
    ],
  },
};

/** Neither the unit nor the infrastructure project may start a process: test/integration is for those. */
const noProcess = { setupFilesAfterEnv: ['<rootDir>/test/support/no-child-process.ts'] };

module.exports = {
  projects: [
    { ...shared, ...noProcess, displayName: 'unit', roots: ['<rootDir>/test/unit'] },
    { ...shared, ...noProcess, displayName: 'infrastructure', roots: ['<rootDir>/test/infrastructure'] },
    {
      ...shared,
      displayName: 'integration',
      roots: ['<rootDir>/test/integration'],
      // One moto server per worker, reset for each suite that asks for it (test/support/moto.ts sharedMoto).
      globalSetup: '<rootDir>/test/support/shared-moto-setup.ts',
      globalTeardown: '<rootDir>/test/support/shared-moto-teardown.ts',
    },
  ],
  // Suites that synthesize or start servers need more than jest's 5 s default.
  testTimeout: 60_000,
  // Two cores: the infrastructure and end-to-end suites are CPU-heavy.
  maxWorkers: 2,
};
