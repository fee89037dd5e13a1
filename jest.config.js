/**
 * Two projects, so the fast loop is visible in the tree: `test/unit` needs no moto, no cfn-lint and no child
 * process (`npm run test:unit`); `test/integration` runs moto's server, the built asset, `npm start`, the tools as
 * processes and the real `cdk synth`. `npm test` runs both.
 * @type {import('jest').Config}
 */
const shared = {
  testEnvironment: 'node',
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

module.exports = {
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/test/unit'],
      setupFilesAfterEnv: ['<rootDir>/test/support/no-child-process.ts'],
    },
    { ...shared, displayName: 'integration', roots: ['<rootDir>/test/integration'] },
  ],
  // Suites that synthesize or start servers need more than jest's 5 s default.
  testTimeout: 60_000,
  // Two cores: the infrastructure and end-to-end suites are CPU-heavy.
  maxWorkers: 2,
};
