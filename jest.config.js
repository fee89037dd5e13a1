/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  // Type-checking is tsc's job in the test command; with isolatedModules ts-jest only transpiles.
  transform: {
    '^.+\\.ts$': 'ts-jest',
  },
  // Suites that synthesize or start servers need more than jest's 5 s default.
  testTimeout: 60_000,
  // Two cores: the infrastructure and end-to-end suites are CPU-heavy.
  maxWorkers: 2,
};
