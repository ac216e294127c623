/**
 * Reading and writing a JSON object's member by a name that came from outside (a request body, a
 * patch), whatever that name is. `obj[key] = value` with the key `__proto__` would replace the
 * object's prototype instead of storing a member, and `obj[key]` would read an inherited value;
 * kube-apiserver keeps `__proto__`, `constructor` or `prototype` as ordinary field names, and so
 * do these.
 */

/** The object's own member `key`, or undefined (never an inherited value such as `Object.prototype`). */
export function ownField(obj: Record<string, unknown>, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

/** Stores `value` as the object's own member `key`, as JSON.parse would (no setter, no prototype change). */
export function setOwnField(obj: Record<string, unknown>, key: string, value: unknown): void {
  // Only `__proto__` has a setter on a plain object; any other key is stored by assignment, which
  // keeps the sandbox's patches (every write of a benchmark's API server) on V8's fast path.
  if (key === '__proto__') Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  else obj[key] = value;
}
