import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/** Tests, their fixtures and the benchmarks: they may start the sandbox. */
const TEST_FILES = ['**/*.test.ts', '**/*.fixture.ts', 'test/**/*.ts', 'bench/**/*.ts'];

/** Product code: held to typescript-eslint's strictTypeChecked (tests and benchmarks not yet). */
const PRODUCT_FILES = ['common/**/*.ts', 'operator/**/*.ts', 'api-gateway/**/*.ts', 'launcher/**/*.ts', 'sdk/**/*.ts', 'sandbox/**/*.ts'];

/**
 * strictTypeChecked with the options this project tunes, for `files` (minus `ignores`). Product code
 * has it; tests and benchmarks come under it folder by folder (issue 16).
 */
const STRICT_TUNING = {
  // Numbers and booleans print as themselves in messages; undefined, null, any, objects stay errors.
  '@typescript-eslint/restrict-template-expressions': ['error', {
    allowNumber: true, allowBoolean: true, allowAny: false, allowNullish: false, allowRegExp: false, allowNever: false,
  }],
  // `() => resolve()` and `(err) => err ? reject(err) : resolve()` are the usual callback shorthands; void
  // returned from a statement position or an operand stays an error.
  '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
  // client-node declares its API models (V1Pod, V1ObjectMeta...) as data-only classes and serialises plain
  // objects; every manifest we build is an object literal, so this rule would flag each one and find nothing.
  '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
  // The same data-only classes: spreading one copies all its data (there is no prototype behaviour to lose).
  '@typescript-eslint/no-misused-spread': ['error', { allow: [{ from: 'package', package: '@kubernetes/client-node', name: ['V1Pod', 'V1ObjectMeta', 'V1Lease', 'V1LeaseSpec', 'V1EnvVar', 'V1PodCondition'] }] }],
};
function strict(files, ignores = []) {
  return [
    ...tseslint.configs.strictTypeChecked.map((config) => ({ ...config, files, ignores })),
    { files, ignores, rules: STRICT_TUNING },
  ];
}

/** What differs for tests and benchmarks under strictTypeChecked. */
const TEST_TUNING = {
  // A loop the test stops from outside (`let running = true; ... while (running) ...; running = false`) has a
  // flag TypeScript types as the literal `true` from its initialiser; only such `true`-typed conditions are let through.
  '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: 'always' }],
};

/** Tests and benchmarks already under strictTypeChecked: one line per folder group (issue 16 brings them all). */
const STRICT_TESTS = [
  ['test/support/**/*.ts', 'test/real-apiserver/**/*.ts', 'bench/**/*.ts'],
  // Colocated unit tests and the sandbox's fixtures (H16t3).
  ['operator/**/*.test.ts', 'api-gateway/**/*.test.ts', 'common/**/*.test.ts', 'sandbox/**/*.test.ts', 'sdk/**/*.test.ts', 'launcher/**/*.test.ts', '**/*.fixture.ts'],
  // The other test/ folders: e2e, chaos, helm, kubectl, lint, operator, rbac, readme, real-cluster, start (H16t1).
  ['test/chaos/**/*.ts', 'test/e2e/**/*.ts', 'test/helm/**/*.ts', 'test/kubectl/**/*.ts', 'test/lint/**/*.ts', 'test/operator/**/*.ts', 'test/rbac/**/*.ts', 'test/readme/**/*.ts', 'test/real-cluster/**/*.ts', 'test/start/**/*.ts'],
];

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
  ...strict(PRODUCT_FILES, TEST_FILES),
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
  // After the line above, so that `any` is an error again in them; `!` after an expectation stays allowed.
  ...STRICT_TESTS.flatMap((files) => [...strict(files), { files, rules: { ...TEST_TUNING, '@typescript-eslint/no-explicit-any': 'error', '@typescript-eslint/no-non-null-assertion': 'off' } }]),
  {
    files: ['sandbox/**/*.ts'],
    ignores: TEST_FILES,
    rules: {
      // The fake API server edits arbitrary JSON (JSON and merge patches, pruning, defaulting, metadata) by keys
      // that come from the data; a Map cannot stand in for a JSON object there.
      '@typescript-eslint/no-dynamic-delete': 'off',
    },
  },
  ...boundaries,
);
