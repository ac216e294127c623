/**
 * The sandbox's CRD schema engine: what kube-apiserver does with a CRD's openAPIV3Schema
 * (pruning, defaulting, validation including CEL rules) plus printer-column JSONPath and a light
 * check of CRD objects themselves.
 */
export type { CompiledSchema } from './compiled-schema';
export { compileSchema } from './compiled-schema';
export { evaluateJsonPath } from './json-path';
export { validateCrdSchema } from './crd-validation';
