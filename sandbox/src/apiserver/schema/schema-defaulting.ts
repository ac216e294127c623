/**
 * Structural defaulting as the real apiserver does it: a default applies when a field is absent
 * (or null and not nullable); defaults are then defaulted further inside; non-nullable nulls without
 * a default are dropped (PruneNonNullableNullsWithoutDefaults), at any depth, under objects with no
 * default below too. Nested objects are only visited when present.
 */
import type { SchemaNode } from './schema-node';
import { isRecord } from '../../../../common/src/json/is-record';

function clone<T>(v: T): T {
  return v === undefined ? v : structuredClone(v);
}

/** Whether `value` under `node` may hold something to default or a null to drop. */
function worthVisiting(node: SchemaNode, value: unknown): boolean {
  return node.hasDefaultsBelow || (typeof value === 'object' && value !== null);
}

/** Applies defaults under `node` to `value` in place. */
export function applyDefaultsTo(node: SchemaNode, value: unknown, isRoot = false): void {
  if (Array.isArray(value)) {
    const items = node.items;
    if (items === undefined) return;
    for (let i = 0; i < value.length; i++) {
      if (value[i] === null && items.hasDefault && !items.nullable) value[i] = clone(items.defaultValue);
      if (worthVisiting(items, value[i])) applyDefaultsTo(items, value[i]);
    }
    return;
  }
  if (!isRecord(value)) return;
  if (node.properties !== undefined) {
    for (const [k, prop] of node.properties) {
      if (isRoot && k === 'metadata') continue;
      const present = Object.prototype.hasOwnProperty.call(value, k) && value[k] !== undefined;
      if (!present || (value[k] === null && !prop.nullable)) {
        if (prop.hasDefault) value[k] = clone(prop.defaultValue);
        else if (present) delete value[k];
      }
      if (value[k] !== undefined && worthVisiting(prop, value[k])) applyDefaultsTo(prop, value[k]);
    }
  }
  const additional = node.additionalProperties;
  if (typeof additional === 'object') {
    for (const k of Object.keys(value)) {
      if (node.properties?.has(k)) continue;
      if (value[k] === null && !additional.nullable) {
        if (additional.hasDefault) value[k] = clone(additional.defaultValue);
        else delete value[k];
      }
      if (worthVisiting(additional, value[k])) applyDefaultsTo(additional, value[k]);
    }
  }
}
