/** @type {import('jest').Config} */
const shared = {
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  moduleNameMapper: {
    '^@kubernetes/client-node$': '<rootDir>/test/support/client-node-native.cjs',
    // sdk/ is also built as ES modules, so its relative imports name the emitted '.js' files
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  testEnvironment: 'node',
};
module.exports = {
  // Tests wait on conditions with their own deadlines; this is only the outer bound.
  testTimeout: 90_000,
  projects: [
    // 1. pure domain tables, 2. reconcilers/executors against the sandbox, 3. routers with supertest
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{common,operator,api-gateway,sandbox,sdk}/**/*.test.ts'] },
    // Suites that cross component boundaries: operator on the sandbox, real kubectl and helm, RBAC
    { ...shared, displayName: 'integration', testMatch: ['<rootDir>/test/!(e2e|real-apiserver)/**/*.test.ts'] },
    // 4. end to end: HTTP -> gateway -> API server -> operator -> simulated rooms (E2E_KUBECONFIG: any cluster)
    { ...shared, displayName: 'e2e', testMatch: ['<rootDir>/test/e2e/**/*.test.ts'] },
    // 5. the real Kubernetes API server (v1.28 kube-apiserver, etcd, kube-controller-manager) started
    //    by test/support/run-tests.ts (and planes of their own for the outage suites), after the others
    { ...shared, displayName: 'real-apiserver', testMatch: ['<rootDir>/test/real-apiserver/**/*.test.ts'] },
  ],
};
