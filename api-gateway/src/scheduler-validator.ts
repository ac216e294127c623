/**
 * The validation port of the gateway. Its implementation is the shared validators compiled from
 * the CRD schemas (`common/src/validation/`), so the gateway and the API server agree; the gateway
 * adds one rule of its own: the name `info` is reserved, because `GET /schedulers/info` shadows
 * `GET /schedulers/{name}` (Maestro's proto carries the same rule).
 */
import type { SchedulerSpec } from '../../common/src/generated/resources';
import type { SchedulerPatch } from '../../common/src/resources/scheduler-patch';
import { validateSchedulerCreateBody, validateSchedulerPatchBody, validateSchedulerSpec } from '../../common/src/validation';
import type { FieldViolation } from './errors';

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: FieldViolation[] };

export interface SchedulerValidator {
  /** A create (or new-version) body: `name` plus the Scheduler spec fields. */
  validateCreateBody(data: unknown): ValidationResult<{ name: string; spec: SchedulerSpec }>;
  /** A complete Scheduler spec (e.g. the result of applying a PATCH). */
  validateSpec(data: unknown): ValidationResult<SchedulerSpec>;
  /** A PATCH body: every field optional; unknown fields are dropped. */
  validatePatchBody(data: unknown): ValidationResult<SchedulerPatch>;
}

const RESERVED_NAMES = new Set(['info']);

export function createSchedulerValidator(): SchedulerValidator {
  return {
    validateCreateBody(data) {
      const result = validateSchedulerCreateBody(data);
      const name = typeof data === 'object' && data !== null && !Array.isArray(data) ? (data as Record<string, unknown>).name : undefined;
      if (typeof name === 'string' && RESERVED_NAMES.has(name)) {
        const reserved = { field: 'name', message: `"${name}" is reserved (GET /schedulers/info)` };
        return { ok: false, errors: result.ok ? [reserved] : [reserved, ...result.errors] };
      }
      return result;
    },
    validateSpec: (data) => validateSchedulerSpec(data),
    validatePatchBody: (data) => validateSchedulerPatchBody(data),
  };
}
