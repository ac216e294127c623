// Builds dist/cjs (CommonJS), dist/esm (ES modules) and dist/types (declarations) with tsc.
// dist/esm gets its own package.json {"type":"module"} so Node reads those files as ESM.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(dirname(fileURLToPath(import.meta.url)));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync(join(here, 'dist'), { recursive: true, force: true });
for (const project of ['tsconfig.cjs.json', 'tsconfig.esm.json']) {
  execFileSync(process.execPath, [tsc, '-p', join(here, project)], { stdio: 'inherit' });
}
mkdirSync(join(here, 'dist', 'esm'), { recursive: true });
writeFileSync(join(here, 'dist', 'esm', 'package.json'), '{ "type": "module" }\n');
writeFileSync(join(here, 'dist', 'cjs', 'package.json'), '{ "type": "commonjs" }\n');
