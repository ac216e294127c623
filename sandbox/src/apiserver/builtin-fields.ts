/**
 * Unknown-field detection for built-in kinds, as the real server's typed decoding does: a field
 * the Go type does not have is dropped, reported as a warning (fieldValidation=Warn) or refused
 * (Strict). The field sets come from @kubernetes/client-node's generated models (their attribute
 * type maps mirror the Kubernetes OpenAPI schema).
 */
import * as k8s from '@kubernetes/client-node';
import type { ResourceType } from './resource-type';
import { isRecord } from '../../../common/src/json/is-record';

interface Attribute {
  baseName: string;
  type: string;
}

type ModelClass = { getAttributeTypeMap(): Attribute[] };

const models = k8s as unknown as Record<string, ModelClass | undefined>;
const fieldCache = new Map<string, Map<string, string> | null>();

function fieldsOf(model: string): Map<string, string> | undefined {
  let fields = fieldCache.get(model);
  if (fields === undefined) {
    const cls = models[model];
    fields = typeof cls?.getAttributeTypeMap === 'function' ? new Map(cls.getAttributeTypeMap().map((a) => [a.baseName, a.type])) : null;
    fieldCache.set(model, fields);
  }
  return fields ?? undefined;
}

/** The client-node model of a built-in kind (`V1Deployment`, `CoreV1Event`, `V2HorizontalPodAutoscaler`). */
function modelNameOf(rt: ResourceType, version: string): string {
  if (rt.kind === 'Event') return rt.group === '' ? 'CoreV1Event' : 'EventsV1Event';
  return `V${version.slice(1, 2).toUpperCase()}${version.slice(2)}${rt.kind}`;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Removes fields the type does not declare, in place, and returns their paths. */
function prune(value: unknown, type: string, path: string, out: string[]): void {
  const [, itemType] = /^Array<(.+)>$/.exec(type) ?? [];
  if (itemType !== undefined) {
    if (Array.isArray(value)) value.forEach((v, i) => prune(v, itemType, `${path}[${i}]`, out));
    return;
  }
  const [, valueType] = /^\{ \[key: string\]: (.+); \}$/.exec(type) ?? [];
  if (valueType !== undefined) {
    if (isRecord(value)) for (const [k, v] of Object.entries(value)) prune(v, valueType, `${path}[${k}]`, out);
    return;
  }
  const fields = fieldsOf(type);
  if (!fields || !isRecord(value)) return;
  for (const [key, v] of Object.entries(value)) {
    const fieldType = fields.get(key);
    if (fieldType === undefined) {
      out.push(join(path, key));
      delete value[key];
    } else prune(v, fieldType, join(path, key), out);
  }
}

/**
 * Drops the fields of a built-in object that its type does not declare and returns their paths
 * (`spec.template.spec.containers[0].imagee`). Unknown kinds are left alone.
 */
export function pruneUnknownBuiltinFields(rt: ResourceType, version: string, obj: Record<string, unknown>): string[] {
  if (rt.custom) return [];
  const model = modelNameOf(rt, version);
  if (!fieldsOf(model)) return [];
  const out: string[] = [];
  prune(obj, model, '', out);
  return out;
}
