/** How an error message names the JSON type of a value it got: `null`, `an array`, or `typeof` (`number`, `object`...). */
export function jsonTypeName(value: unknown): string {
  return value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
}

/** Why a request body is not a JSON object (`the body must be a JSON object; got an array`), or undefined when it is one. */
export function notAJsonObject(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? undefined : `the body must be a JSON object; got ${jsonTypeName(value)}`;
}
