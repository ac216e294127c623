/** @type {import('jest').Config} */
const shared = {
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  moduleNameMapper: { '^@kubernetes/client-node$': '<rootDir>/test/support/client-node-native.cjs' },
  testEnvironment: 'node',
};
module.exports = {
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{common,operator,api-gateway,sandbox}/**/*.test.ts'] },
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/**/*.test.ts'] },
  ],
};
