/** What a parsed JSON request body must satisfy before anything recurses into it or reads a number from it. */
import { joinIndex, memberPath } from '../../common/src/validation/field-path';
import { ValidationError } from './errors';
import { jsonDepthExceeds } from '../../common/src/json/json-depth';

/** Deepest JSON nesting accepted; deeper bodies are refused before anything recurses into them. */
export const MAX_JSON_DEPTH = 32;

/**
 * The 400 for a body nested deeper than MAX_JSON_DEPTH, or undefined: it names the top-level field
 * that nests too deep (`metadata`), or `(body)`, and says what to send instead.
 */
export function tooDeepError(body: unknown): ValidationError | undefined {
  if (!jsonDepthExceeds(body, MAX_JSON_DEPTH)) return undefined;
  const entries = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.entries(body) : [];
  const field = entries.find(([, v]) => jsonDepthExceeds(v, MAX_JSON_DEPTH - 1))?.[0];
  return new ValidationError([{
    field: field === undefined ? '(body)' : memberPath('', field),
    message: `nests deeper than the ${MAX_JSON_DEPTH} levels of objects and arrays a body may hold (no field of this API needs more); send it flatter`,
  }]);
}

/** What a number beyond a double's range is told. */
export const NUMBER_TOO_LARGE = 'is a number too large to read: JSON numbers here must be within ±1.7976931348623157e308';

interface Visit { v: unknown; key: string | number; parent: Visit | undefined }

function pathOf(visit: Visit): string {
  const keys: (string | number)[] = [];
  for (let at = visit; at.parent !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse().reduce<string>((path, key) => (typeof key === 'number' ? joinIndex(path, key) : memberPath(path, key)), '');
}

/** What a string that is not Unicode text is told. */
export const NOT_UNICODE = 'is not Unicode text: it holds a lone UTF-16 surrogate (such as "\\ud800"), which no character is; send the text as UTF-8, or escape whole surrogate pairs';

/** A lone surrogate: with the `u` flag, a pair is one code point and does not match. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * The 400 for a body holding a value that reads as no JSON value of this API, or undefined: a
 * number beyond a double's range, or a key or string that is not Unicode text. JSON.parse reads
 * the number (`1e400`) as Infinity, which no field holds and JSON writes back as null: unchecked,
 * a PATCH of `{"roomsReplicas":1e400}` was told it "got null". Maestro's protojson refuses such a
 * number too. A lone surrogate (`"g\ud800x"`) is stored by the API server as U+FFFD: unchecked,
 * the definition read back was not the one sent, and sending it again was a change each time.
 * Call it on a body within MAX_JSON_DEPTH (iterative all the same).
 */
export function unreadableValueError(body: unknown): ValidationError | undefined {
  const stack: Visit[] = [{ v: body, key: '', parent: undefined }];
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { v } = visit;
    if (typeof v === 'number' && !Number.isFinite(v)) return new ValidationError([{ field: pathOf(visit) || '(body)', message: NUMBER_TOO_LARGE }]);
    if (typeof v === 'string' && LONE_SURROGATE.test(v)) return new ValidationError([{ field: pathOf(visit) || '(body)', message: NOT_UNICODE }]);
    if (typeof v !== 'object' || v === null) continue;
    if (Array.isArray(v)) v.forEach((child: unknown, i) => stack.push({ v: child, key: i, parent: visit }));
    else {
      for (const [key, child] of Object.entries(v)) {
        const at: Visit = { v: child, key, parent: visit };
        if (LONE_SURROGATE.test(key)) return new ValidationError([{ field: pathOf(at), message: `(the key) ${NOT_UNICODE}` }]);
        stack.push(at);
      }
    }
  }
  return undefined;
}
