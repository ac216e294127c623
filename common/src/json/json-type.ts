/** How an error message names the JSON type of a value it got: `null`, `an array`, or `typeof` (`number`, `object`...). */
export function jsonTypeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}
