/**
 * `JSON.stringify` with the return type it really has: undefined for undefined, functions and
 * symbols (the standard library's declaration says `string`, which hides that case).
 */
export function jsonText(value: unknown): string | undefined {
  return JSON.stringify(value);
}
