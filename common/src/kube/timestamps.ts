/**
 * Kubernetes timestamps as they reach us: RFC 3339 strings from watch events and plain JSON, or
 * Date objects from client-node's typed deserialiser (possibly from another realm in tests, so
 * never `instanceof Date`).
 */

/** RFC 3339, or '' when the value is not a timestamp. */
export function toIsoString(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'object' && value !== null && 'toISOString' in value && typeof value.toISOString === 'function') {
    return (value as { toISOString(): string }).toISOString();
  }
  return '';
}

/** Epoch milliseconds, or undefined when the value is not a timestamp (an invalid Date included). */
export function toMillis(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'object' && value !== null && 'getTime' in value && typeof value.getTime === 'function') {
    const ms = (value as { getTime(): number }).getTime();
    return Number.isFinite(ms) ? ms : undefined;
  }
  const ms = Date.parse(toIsoString(value));
  return Number.isFinite(ms) ? ms : undefined;
}

/** RFC 3339 with second precision, as kube-apiserver writes timestamps (`2026-11-26T21:52:30Z`). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}
