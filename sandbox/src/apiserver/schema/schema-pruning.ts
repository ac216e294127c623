/**
 * Structural pruning: drops fields the schema does not specify, in place, and reports their paths
 * (`.spec.foo`) for fieldValidation=Strict|Warn. Honours x-kubernetes-preserve-unknown-fields,
 * additionalProperties and x-kubernetes-embedded-resource; apiVersion/kind/metadata survive at the
 * root and in embedded resources, with metadata cut down to ObjectMeta.
 */
import type { SchemaNode } from './schema-node';
import { isRecord } from '../../../../common/src/json/is-record';

const OBJECT_META_FIELDS = new Set([
  'name',
  'generateName',
  'namespace',
  'selfLink',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'labels',
  'annotations',
  'ownerReferences',
  'finalizers',
  'managedFields',
]);

function objectPath(path: string, key: string): string {
  return `${path}.${key}`;
}

function pruneMetadata(value: unknown, path: string, pruned: string[]): void {
  if (!isRecord(value)) return;
  for (const k of Object.keys(value)) {
    if (!OBJECT_META_FIELDS.has(k)) {
      delete value[k];
      pruned.push(objectPath(path, k));
    }
  }
}

/** Prunes `value` against `node`; `resource` is true at the root and for embedded resources. */
export function pruneValue(node: SchemaNode, value: unknown, path: string, pruned: string[], resource: boolean): void {
  if (Array.isArray(value)) {
    const items = node.items;
    if (items === undefined) return;
    for (let i = 0; i < value.length; i++) pruneValue(items, value[i], `${path}[${i}]`, pruned, items.embeddedResource);
    return;
  }
  if (!isRecord(value)) return;
  const additional = node.additionalProperties;
  for (const k of Object.keys(value)) {
    const childPath = objectPath(path, k);
    if (resource && (k === 'apiVersion' || k === 'kind')) continue;
    if (resource && k === 'metadata') {
      pruneMetadata(value[k], childPath, pruned);
      continue;
    }
    const prop = node.properties?.get(k);
    if (prop !== undefined) {
      pruneValue(prop, value[k], childPath, pruned, prop.embeddedResource);
    } else if (typeof additional === 'object') {
      pruneValue(additional, value[k], childPath, pruned, additional.embeddedResource);
    } else if (!node.preserveUnknownFields && additional !== true) {
      delete value[k];
      pruned.push(childPath);
    }
  }
}
