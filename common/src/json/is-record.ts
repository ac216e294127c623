/** Whether a JSON value is an object (not null, not an array): a record of its members. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
