/**
 * FNV-1a, 32 bits, of a string's UTF-16 code units: a fast, stable (every process and version
 * computes the same value) and well spread hash for choosing among things, never for security.
 * `basis` seeds it (the standard offset basis by default).
 */
export function fnv1a32(text: string, basis = 0x811c9dc5): number {
  let h = basis >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
