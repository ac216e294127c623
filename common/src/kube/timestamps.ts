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

/** Epoch milliseconds, or undefined when the value is not a timestamp. */
export function toMillis(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  const ms = Date.parse(toIsoString(value));
  return Number.isFinite(ms) ? ms : undefined;
}
