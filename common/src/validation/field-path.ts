/** Building Kubernetes-style field paths (`spec.containers[0].name`). */

/** Joins a parent path and a property name. */
export function joinField(parent: string, property: string): string {
  if (property === '') return parent;
  const key = /^[A-Za-z_$][A-Za-z0-9_$-]*$/.test(property) ? property : `[${JSON.stringify(property)}]`;
  if (parent === '') return key;
  return key.startsWith('[') ? `${parent}${key}` : `${parent}.${key}`;
}

/** A member of a request's JSON object; the empty key, which `joinField` reads as no member, is spelt `[""]`. */
export function memberPath(parent: string, key: string): string {
  return key === '' ? `${parent}[""]` : joinField(parent, key);
}

/** A map entry, as Kubernetes writes it: `labels[app]`. */
export function joinMapKey(parent: string, key: string): string {
  return `${parent}[${key}]`;
}

export function joinIndex(parent: string, index: number): string {
  return `${parent}[${index}]`;
}

/** Prefixes a field path (`spec` + `game` = `spec.game`). */
export function withPrefix(prefix: string, field: string): string {
  if (prefix === '') return field;
  if (field === '') return prefix;
  return field.startsWith('[') ? `${prefix}${field}` : `${prefix}.${field}`;
}
