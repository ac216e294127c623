/**
 * `compileSchema` turns one CRD version's openAPIV3Schema into a reusable object that prunes,
 * defaults and validates custom resources the way kube-apiserver v1.32 does. Compile once per CRD
 * version; every call afterwards only walks the data.
 */
import { ABSENT, validateCelRules } from './cel-rule-validation';
import { type FieldCause, invalid } from './field-cause';
import { applyDefaultsTo } from './schema-defaulting';
import { compileNode } from './schema-node';
import { pruneValue } from './schema-pruning';
import { NO_OLD, validateValue } from './schema-validation';

export interface CompiledSchema {
  /**
   * Removes fields not in the schema, in place; returns the pruned paths like `.spec.foo`
   * (for fieldValidation=Strict|Warn). apiVersion/kind/metadata survive at the root.
   */
  prune(obj: Record<string, unknown>): string[];
  /** Structural defaulting in place, as the real server. */
  applyDefaults(obj: Record<string, unknown>): void;
  /** openAPIV3Schema + x-kubernetes-validations; pass `oldObj` on update for transition rules. */
  validate(obj: Record<string, unknown>, oldObj?: Record<string, unknown>): FieldCause[];
}

// strategy.go's hasBlockingErr: these schema errors mean the CEL rules would see the wrong shape.
const BLOCKING_REASONS = new Set(['FieldValueNotSupported', 'FieldValueRequired', 'FieldValueTooLong', 'FieldValueTooMany', 'FieldValueTypeInvalid']);

function internalError(e: unknown): FieldCause {
  return invalid('', null, `internal error: ${e instanceof Error ? e.message : String(e)}`);
}

export function compileSchema(openAPIV3Schema: unknown): CompiledSchema {
  const root = compileNode(openAPIV3Schema);
  return {
    prune(obj) {
      const pruned: string[] = [];
      try {
        pruneValue(root, obj, '', pruned, true);
      } catch {
        // malformed input (e.g. cyclic objects) is left as is
      }
      return pruned;
    },
    applyDefaults(obj) {
      try {
        applyDefaultsTo(root, obj, true);
      } catch {
        // malformed input is left as is
      }
    },
    validate(obj, oldObj) {
      const errs: FieldCause[] = [];
      try {
        validateValue(root, obj, '', errs, true, oldObj === undefined ? NO_OLD : oldObj);
        if (root.hasRulesBelow) {
          if (errs.some((e) => BLOCKING_REASONS.has(e.reason))) {
            errs.push(
              invalid('', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation'),
            );
          } else {
            validateCelRules(root, obj, oldObj === undefined ? ABSENT : oldObj, '', errs);
          }
        }
      } catch (e) {
        errs.push(internalError(e));
      }
      return errs;
    },
  };
}
