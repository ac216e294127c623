/** Validation of Roomkeeper resources and request bodies, compiled from crds/. */
export {
  validateSchedulerSpec,
  validateSchedulerCreateBody,
  validateSchedulerPatchBody,
  schedulerPatchField,
} from './scheduler-validator';
export { podRefusals } from './pod-refusals';
