/**
 * The import boundaries of eslint.config.mjs, checked against the configuration ESLint really
 * computes for a file in each folder (`eslint --print-config`): the sandbox may not import the
 * operator, the gateway or the launcher; the operator and the gateway may not import each other;
 * common/ imports none of them; product code may not import the sandbox (its tests may).
 * `npm run lint` then fails on any such import in the tree.
 */
import { execFile } from 'node:child_process';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { Linter } from 'eslint';
import tseslint from 'typescript-eslint';

const run = promisify(execFile);
const ROOT = path.resolve(__dirname, '../..');
const ESLINT_BIN = path.join(ROOT, 'node_modules', '.bin', 'eslint');

/** The rule settings ESLint computes for a file at this repository path (the file need not exist). */
async function rulesFor(file: string): Promise<Linter.RulesRecord> {
  const { stdout } = await run(ESLINT_BIN, ['--print-config', file], { cwd: ROOT, timeout: 60_000 });
  return (JSON.parse(stdout) as { rules?: Linter.RulesRecord }).rules ?? {};
}

/** The `no-restricted-imports` messages those settings give for `source` in `file`. */
function restrictedImports(rules: Linter.RulesRecord, file: string, source: string): string[] {
  const rule = rules['no-restricted-imports'];
  if (rule === undefined) return [];
  const config: Linter.Config[] = [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { 'no-restricted-imports': rule } }];
  return new Linter({ cwd: ROOT }).verify(source, config, { filename: path.join(ROOT, file) }).map((m) => m.message);
}

/** [file, import path, blocked?] — the path as written in `file`. */
const cases: [string, string, boolean][] = [
  ['sandbox/src/probe.ts', '../../operator/src/operator', true],
  ['sandbox/src/probe.ts', '../../api-gateway/src/main', true],
  ['sandbox/src/probe.ts', '../../launcher/start', true],
  ['sandbox/src/kubelet/probe.ts', '../../../operator/src/rooms/pod-spec', true],
  ['sandbox/src/kubelet/probe.test.ts', '../../../api-gateway/src/app', true],
  ['sandbox/src/kubelet/probe.ts', '../../../common/src/kube/informer', false],
  ['sandbox/src/kubelet/probe.ts', './pod-fields', false],
  ['operator/src/probe.ts', '../../api-gateway/src/errors', true],
  ['operator/src/probe.ts', '../../sandbox/src/index', true],
  ['operator/src/probe.test.ts', '../../api-gateway/src/errors', true],
  ['operator/src/probe.test.ts', '../../sandbox/src/index', false],
  ['operator/src/probe.ts', '../../common/src/logger', false],
  ['api-gateway/src/http/probe.ts', '../../../operator/src/operator', true],
  ['api-gateway/src/probe.ts', '../../sandbox/src/index', true],
  ['api-gateway/src/probe.test.ts', '../../sandbox/src/index', false],
  ['common/src/kube/probe.ts', '../../../operator/src/operator', true],
  ['common/src/kube/probe.ts', '../../../sandbox/src/index', true],
  ['common/src/kube/probe.test.ts', '../../../sandbox/src/index', false],
  ['launcher/probe.ts', '../operator/src/operator', false],
  ['launcher/probe.ts', '../sandbox/src/index', false],
];

describe('import boundaries (eslint.config.mjs)', () => {
  const configs = new Map<string, Promise<Linter.RulesRecord>>();
  const rules = (file: string): Promise<Linter.RulesRecord> => {
    let found = configs.get(file);
    if (!found) configs.set(file, (found = rulesFor(file)));
    return found;
  };

  test.each(cases)('%s importing %s: blocked %s', async (file, target, blocked) => {
    const forms = [
      `import { x } from '${target}';\nexport const y = x;\n`,
      `import type { X } from '${target}';\nexport type Y = X;\n`,
      `export { x } from '${target}';\n`,
    ];
    const found = await rules(file);
    for (const source of forms) {
      const messages = restrictedImports(found, file, source);
      expect({ source, blocked: messages.length > 0 }).toEqual({ source, blocked });
      // The message says why and what to do, not just "restricted".
      for (const m of messages) expect(m).toMatch(/may not|meet only through/);
    }
  });

  test('no-explicit-any is an error in product code, tests and benchmarks alike', async () => {
    for (const file of ['sandbox/src/probe.ts', 'operator/src/probe.ts', 'operator/src/probe.test.ts', 'test/e2e/probe.test.ts', 'test/support/probe.ts', 'bench/probe.ts']) {
      expect([file, (await rules(file))['@typescript-eslint/no-explicit-any']]).toEqual([file, [2]]);
    }
  });
});
