import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Tests, their fixtures and the benchmarks: they may start the sandbox. */
const TEST_FILES = ['**/*.test.ts', '**/*.fixture.ts', 'test/**/*.ts', 'bench/**/*.ts'];

/**
 * Import boundaries between the top-level folders. common/ is at the bottom; the operator and the
 * gateway stand beside each other and talk only through the Kubernetes API; the sandbox is a test
 * double of Kubernetes and knows nothing of the product; launcher/ (`npm start`) may import
 * everything and nothing imports it. Imports are relative, so a folder is reached by climbing to
 * the repository root: `../../operator/...`. test/lint/import-boundaries.test.ts checks these rules.
 */
function forbid(folders, message) {
  return { 'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./)+(${folders.join('|')})(/|$)`, message }] }] };
}
const SIDE_BY_SIDE = 'The operator and the gateway meet only through the Kubernetes API; move what both need to common/.';
const NOT_THE_DOUBLE = 'Product code may not depend on the sandbox (a test double); only tests may start it.';
const boundaries = [
  { files: ['sandbox/**/*.ts'], rules: forbid(['operator', 'api-gateway', 'launcher'], 'The sandbox is a test double of Kubernetes: it may not import the operator, the gateway or the launcher, only common/ (launcher/ depends on the sandbox, not the other way round).') },
  { files: ['common/**/*.ts'], rules: forbid(['operator', 'api-gateway', 'launcher'], 'common/ is the bottom layer: it may not import the operator, the gateway or the launcher.') },
  { files: ['common/**/*.ts'], ignores: TEST_FILES, rules: forbid(['operator', 'api-gateway', 'launcher', 'sandbox'], `common/ is the bottom layer: it may not import the operator, the gateway or the launcher. ${NOT_THE_DOUBLE}`) },
  { files: ['operator/**/*.ts'], rules: forbid(['api-gateway', 'launcher'], SIDE_BY_SIDE) },
  { files: ['operator/**/*.ts'], ignores: TEST_FILES, rules: forbid(['api-gateway', 'launcher', 'sandbox'], `${SIDE_BY_SIDE} ${NOT_THE_DOUBLE}`) },
  { files: ['api-gateway/**/*.ts'], rules: forbid(['operator', 'launcher'], SIDE_BY_SIDE) },
  { files: ['api-gateway/**/*.ts'], ignores: TEST_FILES, rules: forbid(['operator', 'launcher', 'sandbox'], `${SIDE_BY_SIDE} ${NOT_THE_DOUBLE}`) },
];

export default tseslint.config(
  { ignores: ['dist/**', 'sdk/dist/**', 'node_modules/**', '.roomkeeper/**', 'coverage/**', '**/*.cjs', '**/*.js', '**/*.mjs', 'common/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
      'no-console': 'off',
    },
  },
  {
    files: ['**/*.test.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  ...boundaries,
);
