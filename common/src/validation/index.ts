/** Validation of Roomkeeper resources and request bodies, compiled from crds/. */
export type { FieldError, Result } from './result';
export {
  validateSchedulerSpec,
  validateSchedulerCreateBody,
  validateSchedulerPatchBody,
  schedulerSpecSchema,
  schedulerCreateBodySchema,
  schedulerPatchBodySchema,
  type SchedulerCreateBody,
  type ValidateOptions,
} from './scheduler-validator';
export { normaliseMaestroBody } from './maestro-body';
