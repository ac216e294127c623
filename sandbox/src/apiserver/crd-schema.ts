/**
 * The schema library's interface (validation, defaulting, pruning, CEL, printer-column paths)
 * as the API server uses it. The library itself lives in `./schema/`.
 */
export type { CompiledSchema } from './schema/index';
export { compileSchema, evaluateJsonPath, validateCrdSchema } from './schema/index';
