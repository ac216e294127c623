/**
 * A light version of the apiserver's CustomResourceDefinition validation: names, group, scope,
 * versions (exactly one storage version, unique names), a structural root schema of type object,
 * types present on specified fields, and CEL rules that compile.
 */
import { parseCel } from './cel/cel-parser';
import { type FieldCause, ROOT_FIELD, duplicate, invalid, notSupported, required } from './field-cause';
import { compileNode } from './schema-node';
import { pruneValue } from './schema-pruning';
import { validateValue } from './schema-validation';
import { isRecord } from '../../../../common/src/json/is-record';
import { DNS1123_SUBDOMAIN } from '../../../../common/src/kube/label-syntax';
import { DNS1123_LABEL } from '../../../../common/src/kube/object-names';

const LABEL_MESSAGE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_MESSAGE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const MAX_DEPTH = 64;

function nonEmptyString(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}

function validateNames(names: unknown, errs: FieldCause[]): { plural?: string } {
  const path = 'spec.names';
  if (!isRecord(names)) {
    errs.push(required(`${path}.plural`), required(`${path}.kind`));
    return {};
  }
  const out: { plural?: string } = {};
  if (!nonEmptyString(names.plural)) errs.push(required(`${path}.plural`));
  else if (!DNS1123_LABEL.test(names.plural)) errs.push(invalid(`${path}.plural`, names.plural, LABEL_MESSAGE));
  else out.plural = names.plural;
  if (names.singular !== undefined && names.singular !== '' && (typeof names.singular !== 'string' || !DNS1123_LABEL.test(names.singular))) {
    errs.push(invalid(`${path}.singular`, names.singular, LABEL_MESSAGE));
  }
  if (!nonEmptyString(names.kind)) errs.push(required(`${path}.kind`));
  else if (!/^[A-Za-z][A-Za-z0-9]*$/.test(names.kind)) {
    errs.push(invalid(`${path}.kind`, names.kind, 'must be a valid kind name (e.g. "MyKind")'));
  }
  if (names.listKind !== undefined && names.listKind !== '' && (typeof names.listKind !== 'string' || names.listKind === names.kind)) {
    errs.push(invalid(`${path}.listKind`, names.listKind, 'kind and listKind may not be the same'));
  }
  return out;
}

function validateSchemaNode(s: unknown, path: string, errs: FieldCause[], isRoot: boolean, depth: number): void {
  if (!isRecord(s) || depth > MAX_DEPTH) return;
  const type = s.type;
  const typeFree = s['x-kubernetes-int-or-string'] === true || s['x-kubernetes-preserve-unknown-fields'] === true;
  if (isRoot) {
    if (type === undefined || type === '') errs.push(required(`${path}.type`, 'must not be empty at the root'));
    else if (type !== 'object') errs.push(invalid(`${path}.type`, type, 'must be object at the root'));
  } else if ((type === undefined || type === '') && !typeFree) {
    errs.push(required(`${path}.type`, 'must not be empty for specified object fields'));
  }
  if (type !== undefined && !['object', 'array', 'string', 'integer', 'number', 'boolean'].includes(typeof type === 'string' ? type : '')) {
    errs.push(notSupported(`${path}.type`, type, ['array', 'boolean', 'integer', 'number', 'object', 'string']));
  }
  if (s.type === 'array' && s.items === undefined) errs.push(required(`${path}.items`, 'must be specified'));
  if (!isRoot && Object.prototype.hasOwnProperty.call(s, 'default')) validateDefault(s, `${path}.default`, errs);
  if (isRecord(s.properties)) {
    for (const [k, v] of Object.entries(s.properties)) validateSchemaNode(v, `${path}.properties[${k}]`, errs, false, depth + 1);
  }
  if (isRecord(s.additionalProperties)) validateSchemaNode(s.additionalProperties, `${path}.additionalProperties`, errs, false, depth + 1);
  if (isRecord(s.items)) validateSchemaNode(s.items, `${path}.items`, errs, false, depth + 1);
  const rules = s['x-kubernetes-validations'];
  if (Array.isArray(rules)) {
    rules.forEach((r, i) => {
      const rulePath = `${path}.x-kubernetes-validations[${i}].rule`;
      if (!isRecord(r) || !nonEmptyString(r.rule)) {
        errs.push(required(rulePath));
        return;
      }
      try {
        parseCel(r.rule);
      } catch (e) {
        errs.push(invalid(rulePath, r.rule, `compilation failed: ${e instanceof Error ? e.message : String(e)}`));
      }
    });
  }
}

/** A default must itself validate against its schema and carry no unknown fields. */
function validateDefault(schema: Record<string, unknown>, path: string, errs: FieldCause[]): void {
  const value = schema.default;
  if (value === null && schema.nullable !== true) {
    errs.push(invalid(path, null, 'must not be null for a non-nullable field'));
    return;
  }
  const node = compileNode(schema);
  const copy = structuredClone(value);
  const pruned: string[] = [];
  pruneValue(node, copy, '', pruned, node.embeddedResource);
  if (pruned.length > 0) errs.push(invalid(path, value, `must not have unknown fields: ${pruned.map((p) => p.replace(/^\./, '')).join(', ')}`));
  const causes: FieldCause[] = [];
  validateValue(node, value, '', causes);
  for (const c of causes) errs.push({ ...c, field: c.field === ROOT_FIELD ? path : `${path}.${c.field}` });
}

function validateVersions(versions: unknown, errs: FieldCause[]): void {
  const path = 'spec.versions';
  if (!Array.isArray(versions) || versions.length === 0) {
    errs.push(invalid(path, null, 'must have exactly one version marked as storage version'));
    return;
  }
  const seen = new Set<string>();
  let storage = 0;
  versions.forEach((v, i) => {
    const vp = `${path}[${i}]`;
    if (!isRecord(v)) {
      errs.push(required(`${vp}.name`));
      return;
    }
    if (!nonEmptyString(v.name)) errs.push(required(`${vp}.name`));
    else if (!DNS1123_LABEL.test(v.name)) errs.push(invalid(`${vp}.name`, v.name, LABEL_MESSAGE));
    else if (seen.has(v.name)) errs.push(duplicate(`${vp}.name`, v.name));
    else seen.add(v.name);
    if (v.storage === true) storage++;
    const schema = isRecord(v.schema) ? v.schema.openAPIV3Schema : undefined;
    if (!isRecord(schema)) errs.push(required(`${vp}.schema.openAPIV3Schema`, 'schemas are required'));
    else validateSchemaNode(schema, `${vp}.schema.openAPIV3Schema`, errs, true, 0);
  });
  if (storage !== 1) {
    errs.push(invalid(path, versions.map((v) => (isRecord(v) ? v.name : null)), 'must have exactly one version marked as storage version'));
  }
}

/** Light validation of a CustomResourceDefinition object; field paths like `spec.versions[0].schema.openAPIV3Schema`. */
export function validateCrdSchema(crd: unknown): FieldCause[] {
  const errs: FieldCause[] = [];
  try {
    if (!isRecord(crd)) return [required('spec')];
    const spec = crd.spec;
    if (!isRecord(spec)) {
      errs.push(required('spec'));
      return errs;
    }
    if (!nonEmptyString(spec.group)) errs.push(required('spec.group'));
    else if (!DNS1123_SUBDOMAIN.test(spec.group)) errs.push(invalid('spec.group', spec.group, SUBDOMAIN_MESSAGE));
    else if (spec.group.split('.').length < 2) errs.push(invalid('spec.group', spec.group, 'should be a domain with at least one dot'));
    const { plural } = validateNames(spec.names, errs);
    const meta = isRecord(crd.metadata) ? crd.metadata : {};
    const name = meta.name;
    if (!nonEmptyString(name)) errs.push(required('metadata.name', 'name or generateName is required'));
    else if (plural !== undefined && nonEmptyString(spec.group) && name !== `${plural}.${spec.group}`) {
      errs.push(invalid('metadata.name', name, 'must be spec.names.plural+"."+spec.group'));
    }
    if (spec.scope === undefined || spec.scope === '') errs.push(required('spec.scope'));
    else if (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced') errs.push(notSupported('spec.scope', spec.scope, ['Cluster', 'Namespaced']));
    validateVersions(spec.versions, errs);
  } catch (e) {
    errs.push(invalid('', null, `internal error: ${e instanceof Error ? e.message : String(e)}`));
  }
  return errs;
}
