/** @type {import('jest').Config} */
const shared = {
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  moduleNameMapper: { '^@kubernetes/client-node$': '<rootDir>/test/support/client-node-native.cjs' },
  testEnvironment: 'node',
};
module.exports = {
  // Tests wait on conditions with their own deadlines; this is only the outer bound.
  testTimeout: 90_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{common,operator,api-gateway,sandbox}/**/*.test.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};
