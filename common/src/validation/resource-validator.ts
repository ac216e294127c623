/**
 * Validates whole Roomkeeper resources (what the API server checks at admission): the CRD schema
 * of the kind, with pruning and defaults, and every CEL rule through its twin. `metadata` is left
 * to the API server. Pass the stored object as `old` to run transition rules, as on update.
 */
import { crdSchemas, type CrdKind } from '../generated/schemas';
import { runCelTwins } from './cel-runner';
import type { CelScope } from './cel-rules';
import { failed, ok, type Result } from './result';
import { compileSchemaValidator, type SchemaValidator } from './schema-validator';

/** Where the scheduler definition sits in each kind, so its rules run there too. */
const SCHEDULER_SPEC_AT: Partial<Record<CrdKind, string>> = { Scheduler: 'spec', SchedulerVersion: 'spec.definition' };
const SCOPE_OF: Partial<Record<CrdKind, CelScope>> = { Scheduler: 'Scheduler', SchedulerVersion: 'SchedulerVersion', Operation: 'Operation' };

const compiled = new Map<CrdKind, SchemaValidator>();

function validatorOf(kind: CrdKind): SchemaValidator {
  let validator = compiled.get(kind);
  if (!validator) {
    validator = compileSchemaValidator(crdSchemas[kind]);
    compiled.set(kind, validator);
  }
  return validator;
}

function at(root: unknown, path: string): unknown {
  let node = root;
  for (const step of path.split('.')) node = typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[step] : undefined;
  return node;
}

export function validateResource<T>(kind: CrdKind, data: unknown, old?: unknown): Result<T> {
  const checked = validatorOf(kind)(data);
  // The stored object was pruned and defaulted when it was written; compare like with like.
  if (old !== undefined) old = validatorOf(kind)(old).value;
  const errors = [...checked.errors];
  const scope = SCOPE_OF[kind];
  if (scope) errors.push(...runCelTwins(scope, checked.value, { old }));
  const specAt = SCHEDULER_SPEC_AT[kind];
  if (specAt) errors.push(...runCelTwins('SchedulerSpec', at(checked.value, specAt), { base: specAt, old: old === undefined ? undefined : at(old, specAt) }));
  return errors.length === 0 ? ok(checked.value as T) : failed(errors);
}
