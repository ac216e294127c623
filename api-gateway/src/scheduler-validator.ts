/**
 * The validation port of the gateway. Its implementation is the shared validators compiled from
 * the CRD schemas (`common/src/validation/`): the schema's checks before any write. The CRD's
 * cross-field rules, among them the reserved name `info` (`GET /schedulers/info` shadows
 * `GET /schedulers/{name}`, as in Maestro), are the API server's to judge on write.
 */
import type { SchedulerSpec } from '../../common/src/generated/resources';
import type { SchedulerPatch } from '../../common/src/resources/scheduler-patch';
import { schedulerPatchField, validateSchedulerCreateBody, validateSchedulerPatchBody, validateSchedulerSpec } from '../../common/src/validation';
import type { FieldViolation } from './errors';

/** `dropped`: the body's fields that are not a scheduler's (unknown ones, discarded as Maestro's protojson discards them). */
export type ValidationResult<T> = { ok: true; value: T; dropped?: string[] } | { ok: false; errors: FieldViolation[] };

export interface SchedulerValidator {
  /** A create (or new-version) body: `name` plus the Scheduler spec fields. */
  validateCreateBody(data: unknown): ValidationResult<{ name: string; spec: SchedulerSpec }>;
  /** A complete Scheduler spec (e.g. the result of applying a PATCH). */
  validateSpec(data: unknown): ValidationResult<SchedulerSpec>;
  /** A PATCH body: every field optional; unknown fields are dropped. */
  validatePatchBody(data: unknown): ValidationResult<SchedulerPatch>;
  /** The PATCH body field a top-level key names (camelCase or snake_case); undefined for a key PATCH does not take. */
  patchField(key: string): string | undefined;
}

export function createSchedulerValidator(): SchedulerValidator {
  return {
    validateCreateBody: (data) => validateSchedulerCreateBody(data),
    validateSpec: (data) => validateSchedulerSpec(data),
    validatePatchBody: (data) => validateSchedulerPatchBody(data),
    patchField: (key) => schedulerPatchField(key),
  };
}
