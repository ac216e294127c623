/**
 * Validators of scheduler definitions, compiled once (lazily, on first use) from the Scheduler CRD
 * schema in common/src/generated/schemas.ts: types, required fields, enums, ranges, lengths and
 * patterns, with every violation's field path, before anything is written. The CRD's CEL rules
 * (cross-field checks) are evaluated by the one judge, the API server, when the gateway writes:
 * a refusal comes back as the same validation error (api-gateway's KubernetesStore). No copy of
 * a rule lives here, so none can drift from crds/. One rule the CRD cannot state is checked here
 * once the schema holds: a container's requests within its limits (pod-refusals.ts).
 *
 * Field paths are relative to the validated document (the HTTP body); pass `prefix: 'spec'` to get
 * the paths of the Scheduler resource. Unknown fields are dropped, defaults applied; nothing throws.
 */
import type { SchedulerSpec } from '../generated/resources';
import { crdSchemas } from '../generated/schemas';
import type { JsonSchemaProps } from '../resources/json-schema-props';
import type { SchedulerPatch } from '../resources/scheduler-patch';
import { droppedFields } from './dropped-fields';
import { withPrefix } from './field-path';
import { normaliseMaestroBody, propertyNamed, type MaestroBodyOptions } from './maestro-body';
import { podRefusals } from './pod-refusals';
import { failed, ok, type FieldError, type Result } from './result';
import { compileSchemaValidator, type SchemaValidator } from './schema-validator';

export interface ValidateOptions {
  /** Prefix of every reported field path (e.g. `spec` for the Scheduler resource). */
  prefix?: string;
  /** Accept Maestro's snake_case field names (default true). */
  acceptSnakeCase?: boolean;
  /**
   * Only what the Scheduler CRD's schema holds, as the API server judges a Scheduler (default
   * false): no pod-refusals check. A definition the API server accepted fails that check
   * where its room is made, in the words of the Scheduler's field (`spec.spec.containers[0]…`).
   */
  schemaOnly?: boolean;
}

export interface SchedulerCreateBody {
  name: string;
  spec: SchedulerSpec;
}

/** The Scheduler `spec` schema (also SchedulerVersion `spec.definition`). */
function schedulerSpecSchema(): JsonSchemaProps {
  const spec = crdSchemas.Scheduler.properties?.spec;
  if (!spec) throw new Error('generated Scheduler schema has no spec');
  return spec;
}

/** The HTTP create body: `name` plus the spec fields. */
export function schedulerCreateBodySchema(): JsonSchemaProps {
  const spec = schedulerSpecSchema();
  return {
    ...spec,
    required: ['name', ...(spec.required ?? [])],
    properties: { name: { type: 'string', description: 'The scheduler name (metadata.name).' }, ...spec.properties },
  };
}

let patchBodySchema: JsonSchemaProps | undefined;

/**
 * The PATCH body: the spec fields, each optional; containers and autoscaling fields optional too.
 * `game` is not patchable (as in Maestro's PatchSchedulerRequest), so it is dropped. Built once
 * (every PATCH is validated against it, and a 409 looks up each key it names); not to be mutated.
 */
function schedulerPatchBodySchema(): JsonSchemaProps {
  patchBodySchema ??= buildPatchBodySchema();
  return patchBodySchema;
}

function buildPatchBodySchema(): JsonSchemaProps {
  const spec = schedulerSpecSchema();
  const { game: _game, ...properties } = { ...spec.properties };
  const room = properties.spec;
  if (room?.properties?.containers?.items) {
    const containers = room.properties.containers;
    const items = containers.items as JsonSchemaProps;
    properties.spec = {
      ...room,
      required: [],
      properties: { ...room.properties, containers: { ...containers, items: { ...items, required: [] } } },
    };
  }
  if (properties.autoscaling) properties.autoscaling = { ...properties.autoscaling, required: [] };
  return { ...spec, required: [], properties };
}

/** The field of a PATCH body a top-level key names (camelCase or snake_case); undefined for a key that is none (`game` and `name` among them). */
export function schedulerPatchField(key: string): string | undefined {
  return propertyNamed(key, schedulerPatchBodySchema());
}

interface Compiled {
  spec: SchemaValidator;
  create: SchemaValidator;
  patch: SchemaValidator;
}

let compiled: Compiled | undefined;

function validators(): Compiled {
  compiled ??= {
    spec: compileSchemaValidator(schedulerSpecSchema()),
    create: compileSchemaValidator(schedulerCreateBodySchema()),
    patch: compileSchemaValidator(schedulerPatchBodySchema(), { dropDefaults: true }),
  };
  return compiled;
}

function prefixed(errors: FieldError[], prefix: string): FieldError[] {
  return errors.map((e) => ({ field: withPrefix(prefix, e.field), message: e.message }));
}

/** The body with Maestro's spellings read (unless refused by the options), and the fields it sent in both spellings. */
function normalised(data: unknown, schema: JsonSchemaProps, options: ValidateOptions, read: MaestroBodyOptions = {}): { body: unknown; sentTwice: FieldError[] } {
  const sentTwice: FieldError[] = [];
  const body = options.acceptSnakeCase === false ? data : normaliseMaestroBody(data, schema, read, sentTwice);
  return { body, sentTwice: prefixed(sentTwice, options.prefix ?? '') };
}

/** Validates a scheduler definition (Scheduler `spec`, the create body without `name`). */
export function validateSchedulerSpec(data: unknown, options: ValidateOptions = {}): Result<SchedulerSpec> {
  const { body, sentTwice } = normalised(data, schedulerSpecSchema(), options, { emptyAsUnset: true });
  if (sentTwice.length > 0) return failed(sentTwice);
  const checked = validators().spec(body);
  const errors = checked.errors.length === 0 ? (options.schemaOnly ? [] : podRefusals(checked.value as SchedulerSpec, options.prefix)) : prefixed(checked.errors, options.prefix ?? '');
  return errors.length === 0 ? ok(checked.value as SchedulerSpec) : failed(errors);
}

/** Validates the body of POST /schedulers: `name` plus the definition. */
export function validateSchedulerCreateBody(data: unknown, options: ValidateOptions = {}): Result<SchedulerCreateBody> {
  const { body, sentTwice } = normalised(data, schedulerCreateBodySchema(), options, { emptyAsUnset: true });
  if (sentTwice.length > 0) return failed(sentTwice);
  const checked = validators().create(body);
  const errors = [...checked.errors];
  const value = checked.value;
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const { name, ...spec } = value as Record<string, unknown>;
    if (errors.length === 0) {
      const refused = podRefusals(spec as unknown as SchedulerSpec, options.prefix);
      return refused.length === 0 ? ok({ name: name as string, spec: spec as unknown as SchedulerSpec }, droppedFields(body, value)) : failed(refused);
    }
  }
  return failed(prefixed(errors, options.prefix ?? ''));
}

/**
 * Validates the body of PATCH /schedulers/{name}: types, enums and ranges of the fields given. The
 * cross-field rules run on the merged definition: applySchedulerPatch, then validateSchedulerSpec.
 * A list sent empty is not set, as protojson reads it (maestro-body.ts).
 */
export function validateSchedulerPatchBody(data: unknown, options: ValidateOptions = {}): Result<SchedulerPatch> {
  const { body, sentTwice } = normalised(data, schedulerPatchBodySchema(), options, { emptyListAsUnset: true });
  if (sentTwice.length > 0) return failed(sentTwice);
  const checked = validators().patch(body);
  return checked.errors.length === 0 ? ok(checked.value as SchedulerPatch, droppedFields(body, checked.value)) : failed(prefixed(checked.errors, options.prefix ?? ''));
}
