/** The resource model: generated types and schemas, plus the constants and helpers around them. */
export * from '../generated/resources';
export { crdInfo, crdSchemas, type CrdInfo, type CrdKind } from '../generated/schemas';
export type { JsonSchemaProps, ValidationRule } from './json-schema-props';
export * from './api-group';
export * from './labels';
export * from './condition-types';
export * from './operation-names';
export { applySchedulerPatch, isEmptyPatch, type SchedulerPatch } from './scheduler-patch';
