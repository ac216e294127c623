/** The names of scheduler versions, `v<major>.<minor>.<patch>`, as Maestro numbers them. */

export interface ParsedVersion {
  major: number;
  minor: number;
  patch: number;
}

const VERSION = /^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;

/**
 * Parses `v1.2.3`; undefined when it is not a version, or a number of it is too large to count
 * exactly (no version made by adding one to another reaches it).
 */
export function parseVersion(version: string): ParsedVersion | undefined {
  const m = VERSION.exec(version);
  if (!m) return undefined;
  const parsed = { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]) };
  return Object.values(parsed).every(Number.isSafeInteger) ? parsed : undefined;
}
